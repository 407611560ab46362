import { describe, expect, it } from "vitest";
import {
  type Call,
  caller,
  insertUser,
  loggedIn,
  login,
  loginToken,
  manualClock,
  problemOf,
  USER_PASSWORD,
  useTestServer,
} from "../helpers/server.js";

/**
 * Sessions (issue 14, part 4): a user's open sessions with where and when they were opened, the
 * caller's own list with the current one marked, and signing out that is exact: the token of an
 * ended session is refused on the very next request.
 */

interface SessionView {
  id: string;
  created: string;
  lastUsed?: string;
  expires: string;
  clientIp?: string;
  userAgent?: string;
  current?: boolean;
}

const sessionsOf = async (call: Call, url: string) => {
  const response = await call("GET", url);
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as { sessions: SessionView[] }).sessions;
};

describe("sessions", () => {
  const time = manualClock();
  const server = useTestServer({ trustProxy: ["10.0.0.1"], clock: time.clock });
  const admin = server.call;
  const member = (userName: string) => server.signIn({ userName, roles: ["member"] });

  /** Logs in as if from this address (through the one proxy in front) with this user agent. */
  async function loginFrom(userName: string, ip: string, userAgent: string) {
    const response = await server.app.inject({
      method: "POST",
      url: "/auth/login",
      remoteAddress: "10.0.0.1",
      headers: { "x-forwarded-for": `198.51.100.66, ${ip}`, "user-agent": userAgent },
      payload: { userName, password: USER_PASSWORD },
    });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { token: string }).token;
  }

  it("records the client address as --trust-proxy sees it, and the user agent, and marks the current session", async () => {
    const user = await insertUser(server.app, { userName: "s.list", password: USER_PASSWORD, roles: ["member"] });
    const laptop = await loginFrom(user.userName, "203.0.113.10", "bizctl/1.0 laptop");
    await loginFrom(user.userName, "203.0.113.20", "Mozilla/5.0 phone");
    const own = await sessionsOf(caller(server.app, laptop), "/auth/sessions");
    expect(own).toHaveLength(2);
    const mine = own.find((s) => s.current);
    expect(mine).toMatchObject({ clientIp: "203.0.113.10", userAgent: "bizctl/1.0 laptop", current: true });
    expect(own.find((s) => !s.current)).toMatchObject({ clientIp: "203.0.113.20", userAgent: "Mozilla/5.0 phone" });
    for (const session of own) {
      expect(session.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(Date.parse(session.expires)).toBeGreaterThan(Date.parse(session.created));
    }
    // the same sessions as staff see them, without the mark (it belongs to the caller's own list)
    const seen = await sessionsOf(admin, `/Resources/${user.id}/sessions`);
    expect(seen.map((s) => s.id).sort()).toEqual(own.map((s) => s.id).sort());
    expect(seen.every((s) => s.current === undefined)).toBe(true);
  });

  it("refreshes 'last used' at most once a minute, not on every request", async () => {
    const { call, ...user } = await member("s.touch");
    const db = server.app.services.store.db;
    const lastUsed = async () =>
      (await db.selectFrom("sessions").select("last_used_at").where("user_id", "=", user.id).executeTakeFirstOrThrow())
        .last_used_at;
    const atLogin = await lastUsed();
    time.advance(30_000);
    expect((await call("GET", "/auth/isLogged")).statusCode).toBe(200);
    expect(await lastUsed(), "within the minute: no write").toBe(atLogin);
    time.advance(31_000);
    expect((await call("GET", "/auth/isLogged")).statusCode).toBe(200);
    const touched = await lastUsed();
    expect(Date.parse(touched ?? "")).toBe(time.clock().getTime());
    expect((await call("GET", "/auth/isLogged")).statusCode).toBe(200);
    expect(await lastUsed(), "the next request within the minute: no write").toBe(touched);
  });

  it("auth sign-out --others: every other token is refused at once, the current one still works", async () => {
    const user = await insertUser(server.app, { userName: "s.others", password: USER_PASSWORD, roles: ["member"] });
    const tokens = [0, 1, 2].map(async () => loginToken(server.app, user.userName, USER_PASSWORD));
    const [mine, ...others] = (await Promise.all(tokens)).map((token) => caller(server.app, token));
    for (const other of others) expect((await other!("GET", "/auth/isLogged")).statusCode).toBe(200);
    const ended = await mine!("DELETE", "/auth/sessions");
    expect(ended.json()).toEqual({ ended: 2 });
    for (const other of others) problemOf(await other!("GET", "/auth/isLogged"), 401, "token_revoked");
    expect((await mine!("GET", "/auth/isLogged")).statusCode).toBe(200);
    expect((await sessionsOf(mine!, "/auth/sessions")).map((s) => s.current)).toEqual([true]);
  });

  it("ends one session of the caller's own, and no one else's", async () => {
    const { call: mine, ...user } = await member("s.one");
    const second = await loggedIn(server.app, user.userName);
    const theirs = (await member("s.stranger")).call;
    const [theirSession] = await sessionsOf(theirs, "/auth/sessions");
    problemOf(await mine("DELETE", `/auth/sessions/${theirSession!.id}`), 404, "not_found");
    expect((await theirs("GET", "/auth/isLogged")).statusCode).toBe(200);
    const other = (await sessionsOf(mine, "/auth/sessions")).find((s) => !s.current)!;
    expect((await mine("DELETE", `/auth/sessions/${other.id}`)).statusCode).toBe(204);
    problemOf(await second("GET", "/auth/isLogged"), 401, "token_revoked");
    problemOf(await mine("DELETE", `/auth/sessions/${other.id}`), 404, "not_found");
  });

  it("staff end one session of a user, or all of them; the tokens are refused at once", async () => {
    const user = await insertUser(server.app, { userName: "s.staff", password: USER_PASSWORD, roles: ["member"] });
    const first = await login(server.app, user.userName, USER_PASSWORD);
    const second = await loggedIn(server.app, user.userName);
    const firstCall = caller(server.app, first.token);
    const [a, b] = await sessionsOf(admin, `/Resources/${user.id}/sessions`);
    const firstId = (await sessionsOf(firstCall, "/auth/sessions")).find((s) => s.current)!.id;
    expect([a!.id, b!.id]).toContain(firstId);
    expect((await admin("DELETE", `/Resources/${user.id}/sessions/${firstId}`)).statusCode).toBe(204);
    problemOf(await firstCall("GET", "/auth/isLogged"), 401, "token_revoked");
    expect((await second("GET", "/auth/isLogged")).statusCode).toBe(200);
    expect((await admin("DELETE", `/Resources/${user.id}/sessions`)).json()).toEqual({ ended: 1 });
    problemOf(await second("GET", "/auth/isLogged"), 401, "token_revoked");
    expect((await admin("DELETE", `/Resources/${user.id}/sessions`)).json()).toEqual({ ended: 0 });
    expect(await sessionsOf(admin, `/Resources/${user.id}/sessions`)).toEqual([]);
  });

  it("answers 404 for what is not a User, and 403 to members", async () => {
    problemOf(await admin("GET", `/Resources/${crypto.randomUUID()}/sessions`), 404, "not_found");
    const user = await member("s.member");
    problemOf(await user.call("GET", `/Resources/${user.id}/sessions`), 403, "forbidden");
    problemOf(await user.call("DELETE", `/Resources/${server.admin.id}/sessions`), 403, "forbidden");
  });
});
