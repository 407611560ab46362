import { describe, expect, it } from "vitest";
import {
  ADMIN_PASSWORD,
  ADMIN_USER,
  bearer,
  insertUser,
  login,
  loginToken,
  manualClock,
  problemOf,
  startTestServer,
  useTestServer,
} from "../helpers/server.js";

const EVENT = { code: "KICKOFF", name: "Kick-off", startsAt: "2027-01-10T09:00:00Z" };

describe("POST /auth/login", () => {
  const server = useTestServer({ login: false });

  it("logs in with the user name in any case and returns the token, its type, expiry and user", async () => {
    const before = Date.now();
    const response = await server.app.inject({
      method: "POST",
      url: "/auth/login",
      payload: { userName: ADMIN_USER.toUpperCase(), password: ADMIN_PASSWORD },
    });
    const after = Date.now();
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(["expiresAt", "firstLogin", "token", "tokenType", "user"]);
    expect(body.tokenType).toBe("Bearer");
    expect(body.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(body.firstLogin).toBe(false);
    expect(body.user).toEqual({ id: server.admin.id, userName: ADMIN_USER, displayName: ADMIN_USER, roles: ["admin"] });
    // default TTL 8 h from the moment of issue (whole seconds), however long the login took
    const expiresAt = Date.parse(body.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 8 * 3600 * 1000);
    expect(expiresAt).toBeLessThanOrEqual(after + 8 * 3600 * 1000);
    // the token works
    const logged = await server.app.inject({ method: "GET", url: "/auth/isLogged", headers: bearer(body.token) });
    expect(logged.statusCode).toBe(200);
    expect(logged.json()).toEqual({
      loggedIn: true,
      user: body.user,
      expiresAt: body.expiresAt,
      credential: { type: "session" },
    });
  });

  it("answers a wrong password and an unknown user with the same 401 invalid_credentials body", async () => {
    const wrong = await server.app.inject({
      method: "POST",
      url: "/auth/login",
      payload: { userName: ADMIN_USER, password: "not the password at all, sorry" },
    });
    const unknown = await server.app.inject({
      method: "POST",
      url: "/auth/login",
      payload: { userName: "nobody.here", password: "not the password at all, sorry" },
    });
    const a = problemOf(wrong, 401, "invalid_credentials");
    const b = problemOf(unknown, 401, "invalid_credentials");
    expect(a.requestId).toBeTruthy();
    expect(b.requestId).toBeTruthy();
    expect(a.requestId).not.toBe(b.requestId);
    const { requestId: _a, ...restA } = a;
    const { requestId: _b, ...restB } = b;
    expect(restA).toEqual(restB);
    expect(wrong.body.replace(a.requestId!, "")).toBe(unknown.body.replace(b.requestId!, ""));
    expect(wrong.body).not.toContain("nobody");
  });

  it("refuses a login body with an unknown field or a missing password as 400 validation_failed", async () => {
    const extra = await server.app.inject({
      method: "POST",
      url: "/auth/login",
      payload: { userName: ADMIN_USER, password: ADMIN_PASSWORD, admin: true },
    });
    expect(problemOf(extra, 400, "validation_failed").errors).toContainEqual(
      expect.objectContaining({ path: "/admin" }),
    );
    const missing = await server.app.inject({ method: "POST", url: "/auth/login", payload: { userName: ADMIN_USER } });
    expect(problemOf(missing, 400, "validation_failed").errors).toContainEqual(
      expect.objectContaining({ path: "/password" }),
    );
  });
});

/** base64url of a JSON value */
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
const decodePart = (token: string, index: 0 | 1) =>
  JSON.parse(Buffer.from(token.split(".")[index]!, "base64url").toString("utf8"));

describe("Bearer tokens", () => {
  const server = useTestServer({ login: false });

  const isLogged = (headers: Record<string, string> = {}) =>
    server.app.inject({ method: "GET", url: "/auth/isLogged", headers });

  it("revokes the session at logout: the same token then answers 401 token_revoked", async () => {
    const token = await loginToken(server.app, ADMIN_USER, ADMIN_PASSWORD);
    expect((await isLogged(bearer(token))).statusCode).toBe(200);
    const out = await server.app.inject({ method: "POST", url: "/auth/logout", headers: bearer(token) });
    expect(out.statusCode).toBe(204);
    expect(out.body).toBe("");
    const after = await isLogged(bearer(token));
    problemOf(after, 401, "token_revoked");
    expect(after.headers["www-authenticate"]).toMatch(/^Bearer /);
    // a second logout with the revoked token is refused too
    problemOf(
      await server.app.inject({ method: "POST", url: "/auth/logout", headers: bearer(token) }),
      401,
      "token_revoked",
    );
  });

  it("answers a request without Authorization with 401 token_missing and a Bearer challenge", async () => {
    const response = await isLogged();
    problemOf(response, 401, "token_missing");
    expect(response.headers["www-authenticate"]).toMatch(/^Bearer realm="[^"]+"$/);
  });

  it("answers an Authorization header that is not Bearer with 401 token_invalid", async () => {
    problemOf(await isLogged({ authorization: "Basic YWRhOnNlY3JldA==" }), 401, "token_invalid");
    problemOf(await isLogged({ authorization: "Bearer" }), 401, "token_invalid");
    problemOf(await isLogged({ authorization: "Bearer not-a-jwt" }), 401, "token_invalid");
  });

  it("refuses a token whose signature was tampered with (token_invalid)", async () => {
    const token = await loginToken(server.app, ADMIN_USER, ADMIN_PASSWORD);
    const [header, payload, signature] = token.split(".") as [string, string, string];
    // flip a character in the middle of the signature (the last one may carry only padding bits)
    const i = Math.floor(signature.length / 2);
    const flipped = signature[i] === "A" ? "B" : "A";
    const tampered = `${header}.${payload}.${signature.slice(0, i)}${flipped}${signature.slice(i + 1)}`;
    expect(tampered).not.toBe(token);
    problemOf(await isLogged(bearer(tampered)), 401, "token_invalid");
    // and a changed payload under the original signature
    const claims = decodePart(token, 1);
    const forged = `${header}.${b64({ ...claims, roles: ["admin", "support"], exp: claims.exp + 3600 })}.${signature}`;
    problemOf(await isLogged(bearer(forged)), 401, "token_invalid");
    // the genuine token still works
    expect((await isLogged(bearer(token))).statusCode).toBe(200);
  });

  it("refuses an unsigned alg:none token carrying a live session's claims (token_invalid)", async () => {
    const token = await loginToken(server.app, ADMIN_USER, ADMIN_PASSWORD);
    const header = decodePart(token, 0);
    const claims = decodePart(token, 1);
    for (const alg of ["none", "None", "NONE"]) {
      const unsigned = `${b64({ ...header, alg })}.${b64(claims)}.`;
      problemOf(await isLogged(bearer(unsigned)), 401, "token_invalid");
    }
    // HS256 keyed with the public key (the classic algorithm confusion) is refused as well
    const hs = `${b64({ ...header, alg: "HS256" })}.${b64(claims)}.${"A".repeat(43)}`;
    problemOf(await isLogged(bearer(hs)), 401, "token_invalid");
  });

  it("refuses a token signed by another server's keys (token_invalid)", async () => {
    const other = await startTestServer();
    try {
      const foreign = await loginToken(other.app, ADMIN_USER, ADMIN_PASSWORD);
      expect(
        (await other.app.inject({ method: "GET", url: "/auth/isLogged", headers: bearer(foreign) })).statusCode,
      ).toBe(200);
      problemOf(await isLogged(bearer(foreign)), 401, "token_invalid");
      // even when it names this server's key id
      const ownKid = decodePart(await loginToken(server.app, ADMIN_USER, ADMIN_PASSWORD), 0).kid;
      const [, payload, signature] = foreign.split(".");
      const relabelled = `${b64({ ...decodePart(foreign, 0), kid: ownKid })}.${payload}.${signature}`;
      problemOf(await isLogged(bearer(relabelled)), 401, "token_invalid");
    } finally {
      await other.close();
    }
  });

  it("refuses a token over 8 KiB before parsing it, even when it is validly signed for a live session", async () => {
    const token = await loginToken(server.app, ADMIN_USER, ADMIN_PASSWORD);
    const { sub, jti } = decodePart(token, 1);
    const sign = (roles: string[]) => server.app.services.keys.sign({ sub, jti, roles }, 3600);
    // control: a token with the same construction below the limit is accepted
    const small = (await sign(["admin"])).token;
    expect((await isLogged(bearer(small))).statusCode).toBe(200);
    const big = (await sign(Array.from({ length: 1200 }, () => "admin"))).token;
    expect(Buffer.byteLength(big)).toBeGreaterThan(8 * 1024);
    problemOf(await isLogged(bearer(big)), 401, "token_invalid");
    // and a plain junk string of 9 KiB
    problemOf(await isLogged(bearer("x".repeat(9 * 1024))), 401, "token_invalid");
  });
});

describe("isFirstLogin", () => {
  const server = useTestServer();
  const isFirstLogin = (id = "") => server.call("GET", `/auth/isFirstLogin${id && `/${id}`}`);

  it("answers for the caller without an id", async () => {
    const response = await isFirstLogin();
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ employeeId: server.admin.id, firstLogin: false });
  });

  it("lets an admin ask about another employee", async () => {
    const newcomer = await insertUser(server.app, {
      userName: "new.member",
      password: "temporary password for newcomer",
      roles: ["member"],
      temporary: true,
    });
    const response = await isFirstLogin(newcomer.id);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ employeeId: newcomer.id, firstLogin: true });

    const own = await isFirstLogin(server.admin.id);
    expect(own.json()).toEqual({ employeeId: server.admin.id, firstLogin: false });
  });

  it("answers 404 not_found to an admin asking about an unknown id", async () => {
    problemOf(await isFirstLogin(crypto.randomUUID()), 404, "not_found");
  });

  it("refuses a member asking about another employee with 403 forbidden", async () => {
    const member = await server.signIn({
      userName: "plain.member",
      password: "a perfectly fine member password",
      roles: ["member"],
    });
    problemOf(await member.call("GET", `/auth/isFirstLogin/${server.admin.id}`), 403, "forbidden");
    const self = await member.call("GET", `/auth/isFirstLogin/${member.id}`);
    expect(self.json()).toEqual({ employeeId: member.id, firstLogin: false });
  });

  it("needs a credential", async () => {
    problemOf(await server.app.inject({ method: "GET", url: "/auth/isFirstLogin" }), 401, "token_missing");
  });
});

describe("a user with a temporary password", () => {
  const TEMPORARY = "Temporary-Pass-0001-xyz";
  const FINAL = "my brand new and long passphrase";
  const server = useTestServer({ temporary: true, password: TEMPORARY, login: false });

  it("logs in with firstLogin true", async () => {
    const body = await login(server.app, ADMIN_USER, TEMPORARY);
    expect(body.firstLogin).toBe(true);
  });

  it("gets 403 password_change_required on the events list and cannot create events", async () => {
    const token = await loginToken(server.app, ADMIN_USER, TEMPORARY);
    problemOf(
      await server.app.inject({ method: "GET", url: "/api/crm/v1/events", headers: bearer(token) }),
      403,
      "password_change_required",
    );
    problemOf(
      await server.app.inject({ method: "POST", url: "/api/crm/v1/events", headers: bearer(token), payload: EVENT }),
      403,
      "password_change_required",
    );
    const count = await server.app.services.store.db
      .selectFrom("events")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
  });

  it("may call isLogged, isFirstLogin and logout", async () => {
    const token = await loginToken(server.app, ADMIN_USER, TEMPORARY);
    const logged = await server.app.inject({ method: "GET", url: "/auth/isLogged", headers: bearer(token) });
    expect(logged.statusCode).toBe(200);
    expect(logged.json().loggedIn).toBe(true);
    const first = await server.app.inject({ method: "GET", url: "/auth/isFirstLogin", headers: bearer(token) });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ employeeId: server.admin.id, firstLogin: true });
    const out = await server.app.inject({ method: "POST", url: "/auth/logout", headers: bearer(token) });
    expect(out.statusCode).toBe(204);
    problemOf(
      await server.app.inject({ method: "GET", url: "/auth/isLogged", headers: bearer(token) }),
      401,
      "token_revoked",
    );
  });

  it("may call ChangePassWithLastPass, after which firstLogin is false and the events list answers", async () => {
    const token = await loginToken(server.app, ADMIN_USER, TEMPORARY);
    const changed = await server.app.inject({
      method: "POST",
      url: "/auth/ChangePassWithLastPass",
      headers: bearer(token),
      payload: { lastPassword: TEMPORARY, newPassword: FINAL },
    });
    expect(changed.statusCode).toBe(204);
    const first = await server.app.inject({ method: "GET", url: "/auth/isFirstLogin", headers: bearer(token) });
    expect(first.json()).toEqual({ employeeId: server.admin.id, firstLogin: false });
    const list = await server.app.inject({ method: "GET", url: "/api/crm/v1/events", headers: bearer(token) });
    expect(list.statusCode).toBe(200);
    expect((await login(server.app, ADMIN_USER, FINAL)).firstLogin).toBe(false);
  });
});

describe("POST /auth/ChangePassWithLastPass", () => {
  const USER = "carol.changer";
  const CURRENT = "the current password of carol";
  const server = useTestServer({ login: false });

  let seq = 0;
  /** a fresh user per test, so that one test's change does not leak into another */
  async function freshUser(temporary = false) {
    seq += 1;
    const user = await insertUser(server.app, {
      userName: `${USER}${seq}`,
      password: CURRENT,
      roles: ["member"],
      temporary,
    });
    return { ...user, token: await loginToken(server.app, user.userName, CURRENT) };
  }

  const change = (token: string, lastPassword: string, newPassword: string) =>
    server.app.inject({
      method: "POST",
      url: "/auth/ChangePassWithLastPass",
      headers: bearer(token),
      payload: { lastPassword, newPassword },
    });

  async function canLogIn(userName: string, password: string): Promise<boolean> {
    const response = await server.app.inject({ method: "POST", url: "/auth/login", payload: { userName, password } });
    return response.statusCode === 200;
  }

  it("refuses a wrong lastPassword with 401 invalid_credentials and keeps the password", async () => {
    const user = await freshUser();
    problemOf(
      await change(user.token, "this is not the current one", "a new and acceptable passphrase"),
      401,
      "invalid_credentials",
    );
    expect(await canLogIn(user.userName, CURRENT)).toBe(true);
    expect(await canLogIn(user.userName, "a new and acceptable passphrase")).toBe(false);
    // the caller's session is untouched
    expect(
      (await server.app.inject({ method: "GET", url: "/auth/isLogged", headers: bearer(user.token) })).statusCode,
    ).toBe(200);
  });

  it.each([
    ["too short", () => "short-pass", /at least 15 characters/i],
    ["a common password", () => "1qaz2wsx3edc4rfv", /common/i],
    ["a common password in another case", () => "1QAZ2WSX3edc4rfv", /common/i],
    ["containing the user name", (userName: string) => `xx-${userName.toUpperCase()}-xx-long-enough`, /user name/i],
    ["equal to the current one", () => CURRENT, /differ from the current/i],
    ["a repetition", () => "abcabcabcabcabcabc", /repetition/i],
  ])("refuses a new password %s with 400 weak_password saying why", async (_label, make, reason) => {
    const user = await freshUser();
    const newPassword = make(user.userName);
    const problem = problemOf(await change(user.token, CURRENT, newPassword), 400, "weak_password");
    expect(problem.detail).toMatch(reason);
    expect(problem.errors).toContainEqual(expect.objectContaining({ path: "/newPassword" }));
    expect(problem.detail).not.toContain(newPassword);
    if (newPassword !== CURRENT) expect(await canLogIn(user.userName, newPassword)).toBe(false);
    expect(await canLogIn(user.userName, CURRENT)).toBe(true);
  });

  it("changes the password: 204, firstLogin cleared, other sessions revoked, the current one kept", async () => {
    const user = await freshUser(true);
    const other = await loginToken(server.app, user.userName, CURRENT);
    const NEW = "an entirely new passphrase for carol";
    const response = await change(user.token, CURRENT, NEW);
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe("");

    const first = await server.app.inject({ method: "GET", url: "/auth/isFirstLogin", headers: bearer(user.token) });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ employeeId: user.id, firstLogin: false });
    // the current session is still valid and no longer restricted
    expect(
      (await server.app.inject({ method: "GET", url: "/api/crm/v1/events", headers: bearer(user.token) })).statusCode,
    ).toBe(200);
    // the other session of the same user is revoked
    problemOf(
      await server.app.inject({ method: "GET", url: "/auth/isLogged", headers: bearer(other) }),
      401,
      "token_revoked",
    );
    expect(await canLogIn(user.userName, CURRENT)).toBe(false);
    const again = await login(server.app, user.userName, NEW);
    expect(again.firstLogin).toBe(false);
  });

  it("leaves the sessions of other users alone", async () => {
    const bystander = await freshUser();
    const user = await freshUser();
    expect((await change(user.token, CURRENT, "yet another fine passphrase here")).statusCode).toBe(204);
    expect(
      (await server.app.inject({ method: "GET", url: "/auth/isLogged", headers: bearer(bystander.token) })).statusCode,
    ).toBe(200);
  });
});

describe("token expiry", () => {
  const clock = manualClock(new Date("2027-03-01T08:00:00Z"));
  const server = useTestServer({ clock: clock.clock, login: false });

  const isLogged = (token: string) =>
    server.app.inject({ method: "GET", url: "/auth/isLogged", headers: bearer(token) });

  it("answers 401 token_expired once the 8 h lifetime has passed, whether or not the token was seen before", async () => {
    const seen = await login(server.app, ADMIN_USER, ADMIN_PASSWORD);
    const unseen = await loginToken(server.app, ADMIN_USER, ADMIN_PASSWORD);
    expect(Date.parse(seen.expiresAt)).toBe(Date.parse("2027-03-01T16:00:00Z"));
    expect((await isLogged(seen.token)).statusCode).toBe(200);

    clock.advance(8 * 3600 * 1000 - 5_000);
    expect((await isLogged(seen.token)).statusCode).toBe(200);

    clock.advance(10_000);
    const expired = await isLogged(seen.token);
    problemOf(expired, 401, "token_expired");
    expect(expired.headers["www-authenticate"]).toMatch(/^Bearer /);
    problemOf(await isLogged(unseen), 401, "token_expired");
    problemOf(
      await server.app.inject({ method: "GET", url: "/api/crm/v1/events", headers: bearer(seen.token) }),
      401,
      "token_expired",
    );
    // a fresh login at the new time works
    expect((await isLogged(await loginToken(server.app, ADMIN_USER, ADMIN_PASSWORD))).statusCode).toBe(200);
  });
});
