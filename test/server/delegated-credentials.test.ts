import { beforeAll, describe, expect, it } from "vitest";
import { requestResetToken } from "../helpers/mail.js";
import { authHeader, type Credentials, createConsumer, INJECT_BASE, injectFlow, signer } from "../helpers/oauth.js";
import { STORES } from "../helpers/postgres.js";
import {
  type Call,
  caller,
  createResource,
  type InjectResponse,
  login,
  NEW_PASSWORD,
  problemOf,
  type TestServer,
  USER_PASSWORD,
  useTestServer,
} from "../helpers/server.js";
import { codeOf } from "../helpers/totp.js";

/**
 * Delegated credentials do not manage the account (spec 1.1): OAuth token credentials act on the
 * data their user may act on, and every account operation (sessions, passwords, unlock,
 * invitations, grants) answers 403 to them, whatever the user's roles. The user's own login
 * still may; and a password change or reset ends the grants with the Bearer sessions.
 */

const EVENTS = "/api/crm/v1/events";

interface World {
  server: TestServer;
  admin: Call;
  member: { id: string; userName: string };
  /** the user whose credentials the row uses, logged in with a password, and its grant */
  owner: { id: string; userName: string; bearer: Call; sessionId: string; signed: Call; grant: Credentials };
}

/** A caller that signs each request with token credentials (JSON bodies are not signed, as RFC 5849 says). */
function signedCaller(server: TestServer, consumer: { key: string; secret: string }, grant: Credentials): Call {
  return (method, url, payload, headers = {}) =>
    server.app.inject({
      method,
      url,
      headers: {
        ...headers,
        authorization: authHeader(signer(consumer), { method, url: `${INJECT_BASE}${url}` }, grant),
      },
      ...(payload !== undefined && { payload: payload as object }),
    });
}

interface AccountOperation {
  name: string;
  /** admin-only operations on another user are tried with the admin's grant alone */
  owners: ("admin" | "member")[];
  run(call: Call, world: World): Promise<InjectResponse>;
}

const ACCOUNT_OPERATIONS: AccountOperation[] = [
  { name: "list own sessions", owners: ["admin", "member"], run: (call) => call("GET", "/auth/sessions") },
  { name: "end own other sessions", owners: ["admin", "member"], run: (call) => call("DELETE", "/auth/sessions") },
  {
    name: "end one own session",
    owners: ["admin", "member"],
    run: (call, w) => call("DELETE", `/auth/sessions/${w.owner.sessionId}`),
  },
  {
    name: "change own password",
    owners: ["admin", "member"],
    run: (call) =>
      call("POST", "/auth/ChangePassWithLastPass", { lastPassword: USER_PASSWORD, newPassword: NEW_PASSWORD }),
  },
  { name: "list own grants", owners: ["admin", "member"], run: (call) => call("GET", "/oauth/tokens") },
  {
    name: "start a second factor's enrollment",
    owners: ["admin", "member"],
    run: (call) => call("POST", "/auth/mfa/totp"),
  },
  { name: "read the second factor's state", owners: ["admin", "member"], run: (call) => call("GET", "/auth/mfa/totp") },
  {
    name: "revoke own grant",
    owners: ["admin", "member"],
    run: (call, w) => call("DELETE", `/oauth/tokens/${encodeURIComponent(w.owner.grant.token)}`),
  },
  {
    name: "list a user's sessions",
    owners: ["admin"],
    run: (call, w) => call("GET", `/Resources/${w.member.id}/sessions`),
  },
  {
    name: "end a user's sessions",
    owners: ["admin"],
    run: (call, w) => call("DELETE", `/Resources/${w.member.id}/sessions`),
  },
  { name: "unlock a user", owners: ["admin"], run: (call, w) => call("POST", `/auth/unlock/${w.member.id}`) },
  { name: "invite a user", owners: ["admin"], run: (call, w) => call("POST", `/Resources/${w.member.id}/invitation`) },
  {
    name: "set a user's temporary password",
    owners: ["admin"],
    run: async (call, w) => {
      const current = (await w.admin("GET", `/Resources/${w.member.id}`)).json() as Record<string, unknown>;
      return call("PUT", `/Resources/${w.member.id}`, { ...current, password: NEW_PASSWORD });
    },
  },
];

describe.each(STORES)("delegated credentials on %s", (_store, start) => {
  // this file logs in far more often than a person would
  const server = useTestServer({ loginRateLimit: { max: 10_000, timeWindowMs: 60_000 } }, start);
  const admin = server.call;
  let consumer: { id: string; key: string; secret: string };
  let member: { id: string; userName: string };

  beforeAll(async () => {
    consumer = await createConsumer(server.app, server.token, { name: "Partner" });
    const created = await createResource(admin, {
      resourceType: "User",
      userName: "mia.member",
      emails: [{ value: "mia@example.com", primary: true }],
    });
    member = { id: String(created.id), userName: "mia.member" };
  });

  /** A fresh user of this role with a password session and a grant of its own. */
  async function ownerOf(role: "admin" | "member"): Promise<World["owner"]> {
    const userName = `${role}-${crypto.randomUUID().slice(0, 8)}`;
    const user = await server.signIn({ userName, roles: [role], email: `${userName}@example.com` });
    const { access } = await injectFlow(server.app, consumer, user.token);
    const sessions = (await user.call("GET", "/auth/sessions")).json() as {
      sessions: { id: string; current: boolean }[];
    };
    return {
      id: user.id,
      userName,
      bearer: user.call,
      sessionId: sessions.sessions.find((s) => s.current)!.id,
      signed: signedCaller(server, consumer, access),
      grant: access,
    };
  }

  const cases = ACCOUNT_OPERATIONS.flatMap((operation) => operation.owners.map((owner) => ({ operation, owner })));

  it.each(cases)(
    "$operation.name through an application acting for a $owner: 403, nothing changes",
    async ({ operation, owner: role }) => {
      const owner = await ownerOf(role);
      const world: World = { server, admin, member, owner };
      const before = (await admin("GET", `/Resources/${member.id}`)).json() as Record<string, unknown>;
      const problem = problemOf(await operation.run(owner.signed, world), 403, "forbidden");
      expect(problem.detail).toMatch(/own login/);
      // the owner's session, its grant and the member's account are as they were
      expect((await owner.bearer("GET", "/auth/isLogged")).statusCode).toBe(200);
      expect((await owner.signed("GET", "/auth/isLogged")).statusCode).toBe(200);
      const after = (await admin("GET", `/Resources/${member.id}`)).json() as Record<string, unknown>;
      expect(after.meta).toEqual(before.meta);
      // the password is as it was
      await login(server.app, owner.userName, USER_PASSWORD);
    },
  );

  it.each(ACCOUNT_OPERATIONS.filter((o) => o.owners.includes("member")))(
    "$name with the user's own login still works",
    async (operation) => {
      const owner = await ownerOf("member");
      const response = await operation.run(owner.bearer, { server, admin, member, owner });
      expect(response.statusCode).toBeLessThan(300);
    },
  );

  it.each([
    ["POST", "/auth/mfa/totp/verify", { code: "123456" }],
    ["DELETE", "/auth/mfa/totp", { password: USER_PASSWORD, code: "123456" }],
  ] as const)(
    "%s %s (the second factor's activation and removal) through an application: 403",
    async (method, path, body) => {
      const owner = await ownerOf("member");
      const problem = problemOf(await owner.signed(method, path, body), 403, "forbidden");
      expect(problem.detail).toMatch(/own login/);
    },
  );

  it("lets an application act on data: events, and an admin's directory changes", async () => {
    const owner = await ownerOf("admin");
    const code = `DL-${crypto.randomUUID().slice(0, 8)}`;
    const created = await owner.signed("POST", EVENTS, {
      code,
      name: "Partner sync",
      startsAt: "2027-05-01T10:00:00Z",
    });
    expect(created.statusCode).toBe(201);
    expect((await owner.signed("GET", `${EVENTS}/${code}`)).statusCode).toBe(200);
    const current = (await admin("GET", `/Resources/${member.id}`)).json() as Record<string, unknown>;
    const updated = await owner.signed("PUT", `/Resources/${member.id}`, { ...current, title: "Clerk" });
    expect(updated.statusCode).toBe(200);
  });

  it.each([
    ["a password change", "change"],
    ["a reset", "reset"],
  ] as const)("%s with the user's own login ends every grant and every other session", async (_name, how) => {
    const owner = await ownerOf("member");
    const otherSession = caller(server.app, (await login(server.app, owner.userName, USER_PASSWORD)).token);
    if (how === "change") {
      const changed = await owner.bearer("POST", "/auth/ChangePassWithLastPass", {
        lastPassword: USER_PASSWORD,
        newPassword: NEW_PASSWORD,
      });
      expect(changed.statusCode).toBe(204);
      // the session that made the change is the one kept
      expect((await owner.bearer("GET", "/auth/isLogged")).statusCode).toBe(200);
    } else {
      const token = await requestResetToken(server, {
        userName: owner.userName,
        email: `${owner.userName}@example.com`,
      });
      const reset = await server.app.inject({
        method: "PUT",
        url: "/resetPassword",
        payload: { token, newPassword: NEW_PASSWORD },
      });
      expect(reset.statusCode).toBe(204);
      problemOf(await owner.bearer("GET", "/auth/isLogged"), 401, "token_revoked");
    }
    problemOf(await otherSession("GET", "/auth/isLogged"), 401, "token_revoked");
    problemOf(await owner.signed("GET", "/auth/isLogged"), 401, "oauth_token_invalid");
  });
});

describe.each(STORES)("an application's grant under --require-mfa on %s", (_store, start) => {
  const server = useTestServer({ requireMfaRoles: ["admin", "support"] }, start);

  /** Enrolls and activates a factor with `call`, the user's own login. */
  async function enroll(call: Call): Promise<void> {
    const started = await call("POST", "/auth/mfa/totp");
    expect(started.statusCode, started.body).toBe(200);
    const { secret } = started.json() as { secret: string };
    const verified = await call("POST", "/auth/mfa/totp/verify", { code: codeOf(secret) });
    expect(verified.statusCode, verified.body).toBe(200);
  }

  it("is confined once its owner gains a required role without a factor, freed as the owner enrolls, ended by a reset", async () => {
    // the first admin must enroll before it may act at all
    await enroll(server.call);
    const consumer = await createConsumer(server.app, server.token, { name: "Partner" });
    const userName = `grantor-${crypto.randomUUID().slice(0, 8)}`;
    const owner = await server.signIn({ userName, roles: ["member"] });
    const { access } = await injectFlow(server.app, consumer, owner.token);
    const signed = signedCaller(server, consumer, access);
    expect((await signed("GET", "/Resources?count=1")).statusCode).toBe(200);

    // promoted to a role the policy covers: the grant acts as that owner's login would
    const current = (await server.call("GET", `/Resources/${owner.id}`)).json() as Record<string, unknown>;
    const promoted = await server.call("PUT", `/Resources/${owner.id}`, { ...current, roles: [{ value: "support" }] });
    expect(promoted.statusCode, promoted.body).toBe(200);
    problemOf(await signed("GET", "/Resources?count=1"), 403, "mfa_enrollment_required");

    await enroll(owner.call);
    expect((await signed("GET", "/Resources?count=1")).statusCode).toBe(200);

    // support's reset ends every session of the user, the grant's with them
    const reset = await server.call("DELETE", `/Resources/${owner.id}/mfa?reason=lost+phone`);
    expect(reset.statusCode, reset.body).toBe(200);
    problemOf(await signed("GET", "/Resources?count=1"), 401, "oauth_token_invalid");
  });
});
