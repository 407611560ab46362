import { describe, expect, it } from "vitest";
import { authHeader, createConsumer, INJECT_BASE, injectFlow, signer } from "../helpers/oauth.js";
import { STORES } from "../helpers/postgres.js";
import {
  caller,
  insertUser,
  loggedIn,
  loginToken,
  problemOf,
  serverPerTest,
  type TestServer,
  USER_PASSWORD,
} from "../helpers/server.js";

/**
 * A cap on the open login sessions of one user (`--max-sessions`, default 10): a login beyond it
 * ends the oldest, and says so in the audit trail. A grant's session (OAuth token credentials)
 * is not a login and neither counts nor ends.
 */

describe.each(STORES)("the session cap on %s", (_store, start) => {
  const startServer = serverPerTest(start);
  const serverWith = (maxSessionsPerUser?: number) =>
    startServer({
      loginRateLimit: { max: 10_000, timeWindowMs: 60_000 },
      ...(maxSessionsPerUser !== undefined && { maxSessionsPerUser }),
    });

  const isLogged = (server: TestServer, token: string) => caller(server.app, token)("GET", "/auth/isLogged");

  it.each([
    { cap: 3, logins: 5 },
    { cap: 1, logins: 2 },
    { cap: undefined, logins: 12 },
  ])("with a cap of $cap, $logins logins leave the newest open and end the oldest", async ({ cap, logins }) => {
    const server = await serverWith(cap);
    const kept = cap ?? 10;
    const user = await insertUser(server.app, { userName: "mia", password: USER_PASSWORD, roles: ["member"] });
    const tokens: string[] = [];
    for (let i = 0; i < logins; i++) tokens.push(await loginToken(server.app, user.userName, USER_PASSWORD));
    for (const [i, token] of tokens.entries()) {
      if (i < logins - kept) problemOf(await isLogged(server, token), 401, "token_revoked");
      else expect((await isLogged(server, token)).statusCode).toBe(200);
    }
    const admin = await loggedIn(server.app, server.admin.userName, server.admin.password);
    const state = (await admin("GET", `/Resources/${user.id}`)).json() as { openSessions: number };
    expect(state.openSessions).toBe(kept);
    const trail = (
      await admin(
        "GET",
        `/audit?filter=${encodeURIComponent(`action eq "sessions.end" and target.id eq "${user.id}"`)}`,
      )
    ).json() as { data: { details: Record<string, unknown> }[] };
    expect(trail.data).toHaveLength(logins - kept);
    expect(trail.data[0]!.details).toEqual({ ended: 1, reason: "session cap", maxSessions: kept });
  });

  it("does not count or end a grant's session", async () => {
    const server = await serverWith(2);
    const adminToken = await loginToken(server.app, server.admin.userName, server.admin.password);
    const consumer = await createConsumer(server.app, adminToken);
    const user = await insertUser(server.app, { userName: "gus", password: USER_PASSWORD, roles: ["member"] });
    const first = await loginToken(server.app, user.userName, USER_PASSWORD);
    const { access } = await injectFlow(server.app, consumer, first);
    const second = await loginToken(server.app, user.userName, USER_PASSWORD);
    // two logins within the cap of two: both open, beside the grant
    expect((await isLogged(server, first)).statusCode).toBe(200);
    expect((await isLogged(server, second)).statusCode).toBe(200);
    await loginToken(server.app, user.userName, USER_PASSWORD);
    problemOf(await isLogged(server, first), 401, "token_revoked");
    const signed = await server.app.inject({
      method: "GET",
      url: "/auth/isLogged",
      headers: {
        authorization: authHeader(signer(consumer), { method: "GET", url: `${INJECT_BASE}/auth/isLogged` }, access),
      },
    });
    expect(signed.statusCode, signed.body).toBe(200);
  });
});
