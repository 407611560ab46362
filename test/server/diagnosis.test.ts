import { describe, expect, it } from "vitest";
import { STORES } from "../helpers/postgres.js";
import {
  type Call,
  caller,
  type InjectResponse,
  insertUser,
  loggedIn,
  login,
  serverPerTest,
  TEMP_PASSWORD,
  type TestAdmin,
  type TestServer,
  type TestServerOptions,
  tryLogin,
  USER_PASSWORD,
} from "../helpers/server.js";
import { base32Bytes, independentCode } from "../helpers/totp.js";

/**
 * `GET /Users/{id}/diagnosis` (spec 1.11): for each state a user is made in it, the diagnosis names
 * it (and the healthy user gets none), and a real login then meets the same reason: refused with
 * it (the audit record of the refusal names the check's reason), or let in with the restriction
 * or the consequence the diagnosis announced. The diagnosis and the login run the same checks.
 */

const SCIM_USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

type Reason = { code: string; effect: string; since?: string; until?: string; fix?: { by: string; command?: string } };
type Diagnosis = { healthy: boolean; reasons: Reason[]; checks: string[] };

interface World {
  server: TestServer;
  admin: Call;
}

interface Scenario {
  state: string;
  options?: TestServerOptions;
  /** makes the user; the password a login tries */
  make: (world: World) => Promise<{ user: { id: string; userName: string }; password: string; otp?: string }>;
  /** what a real login then does */
  login: (response: InjectResponse) => void;
  /** the code the audit record of a refused login names */
  reason?: string;
  /** the command support is offered (undefined: an admin's fix, support is told to ask one) */
  supportFix?: RegExp;
}

const member = (world: World, userName: string, more: { temporary?: boolean; email?: string | false } = {}) =>
  insertUser(world.server.app, {
    userName,
    password: more.temporary ? TEMP_PASSWORD : USER_PASSWORD,
    roles: ["member"],
    ...(more.temporary && { temporary: true }),
    ...(more.email !== false && { email: more.email ?? `${userName}@example.com` }),
  });

async function passwordless(world: World, userName: string): Promise<{ id: string; userName: string }> {
  const created = await world.admin("POST", "/Users", {
    schemas: [SCIM_USER],
    userName,
    emails: [{ value: `${userName}@example.com`, primary: true }],
    roles: [{ value: "member" }],
  });
  expect(created.statusCode, created.body).toBe(201);
  return { id: (created.json() as { id: string }).id, userName };
}

const refused = (status: number, code: string) => (response: InjectResponse) => {
  expect(response.statusCode, response.body).toBe(status);
  expect((response.json() as { code: string }).code).toBe(code);
};
const letIn = (check: (body: Record<string, unknown>) => void) => (response: InjectResponse) => {
  expect(response.statusCode, response.body).toBe(200);
  check(response.json() as Record<string, unknown>);
};

async function enrollAndSpendRecoveryCode(world: World, user: TestAdmin): Promise<void> {
  const own = await loggedIn(world.server.app, user.userName, user.password);
  const { secret } = (await own("POST", "/auth/mfa/totp")).json() as { secret: string };
  const verified = await own("POST", "/auth/mfa/totp/verify", {
    code: independentCode(base32Bytes(secret), Date.now()),
  });
  expect(verified.statusCode, verified.body).toBe(200);
  const { recoveryCodes } = verified.json() as { recoveryCodes: string[] };
  const withCode = await world.server.app.inject({
    method: "POST",
    url: "/auth/login",
    payload: { userName: user.userName, password: user.password, otp: recoveryCodes[0] },
  });
  expect(withCode.statusCode, withCode.body).toBe(200);
}

const SCENARIOS: Scenario[] = [
  {
    state: "locked",
    async make(world) {
      const user = await member(world, "lena");
      for (let i = 0; i < 5; i++) await tryLogin(world.server.app, user.userName, "not the password at all");
      return { user, password: user.password };
    },
    login: refused(429, "account_locked"),
    reason: "locked",
    supportFix: /^bizctl users unlock lena$/,
  },
  {
    state: "disabled",
    async make(world) {
      const user = await member(world, "dora");
      const patched = await world.admin("PATCH", `/Users/${user.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", path: "active", value: false }],
      });
      expect(patched.statusCode, patched.body).toBe(200);
      return { user, password: user.password };
    },
    login: refused(401, "invalid_credentials"),
    reason: "disabled",
    supportFix: /^bizctl users enable dora$/,
  },
  {
    state: "invitation_pending",
    async make(world) {
      const user = await passwordless(world, "ines");
      expect((await world.admin("POST", `/Resources/${user.id}/invitation`)).statusCode).toBe(202);
      return { user, password: USER_PASSWORD };
    },
    login: refused(401, "invalid_credentials"),
    reason: "invitation_pending",
    supportFix: /^bizctl users invite ines$/,
  },
  {
    state: "invitation_expired",
    async make(world) {
      const user = await passwordless(world, "ivo");
      expect((await world.admin("POST", `/Resources/${user.id}/invitation`)).statusCode).toBe(202);
      await world.server.app.services.store.db
        .updateTable("password_resets")
        .set({ expires_at: new Date(Date.now() - 60_000).toISOString() })
        .where("user_id", "=", user.id)
        .execute();
      return { user, password: USER_PASSWORD };
    },
    login: refused(401, "invalid_credentials"),
    reason: "invitation_expired",
    supportFix: /^bizctl users invite ivo$/,
  },
  {
    state: "no_password",
    make: async (world) => ({ user: await passwordless(world, "nils"), password: USER_PASSWORD }),
    login: refused(401, "invalid_credentials"),
    reason: "no_password",
    supportFix: /^bizctl users invite nils$/,
  },
  {
    state: "temporary_password_void",
    async make(world) {
      // a temporary password support set, on an account that holds support now
      const user = await insertUser(world.server.app, {
        userName: "vera",
        password: TEMP_PASSWORD,
        roles: ["support"],
        temporary: true,
        email: "vera@example.com",
      });
      await world.server.app.services.store.db
        .updateTable("credentials")
        .set({ issuer_role: "support" })
        .where("user_id", "=", user.id)
        .execute();
      return { user, password: TEMP_PASSWORD };
    },
    login: refused(401, "invalid_credentials"),
    reason: "temporary_password_void",
    // only an admin sets the password of a support account
    supportFix: undefined,
  },
  {
    state: "second_factor_lost",
    async make(world) {
      const user = await member(world, "otto");
      await enrollAndSpendRecoveryCode(world, user);
      return { user, password: user.password };
    },
    login: refused(401, "mfa_required"),
    supportFix: /^bizctl users mfa-reset otto --reason/,
  },
  {
    state: "mfa_enrollment_required",
    options: { requireMfaRoles: ["member"] },
    make: async (world) => {
      const user = await member(world, "mira");
      return { user, password: user.password };
    },
    login: letIn((body) => expect(body.mfaEnrollmentRequired).toBe(true)),
    supportFix: /^bizctl auth mfa enroll$/,
  },
  {
    state: "temporary_password",
    make: async (world) => {
      const user = await member(world, "tom", { temporary: true });
      return { user, password: TEMP_PASSWORD };
    },
    login: letIn((body) => expect(body.firstLogin).toBe(true)),
    supportFix: /^bizctl auth change-password$/,
  },
  {
    state: "session_cap",
    options: { maxSessionsPerUser: 2 },
    async make(world) {
      const user = await member(world, "sam");
      await login(world.server.app, user.userName, user.password);
      await login(world.server.app, user.userName, user.password);
      return { user, password: user.password };
    },
    login: letIn(() => {}),
    supportFix: /^bizctl users sign-out sam$/,
  },
  {
    state: "no_email",
    make: async (world) => {
      const user = await member(world, "ned", { email: false });
      return { user, password: user.password };
    },
    login: letIn(() => {}),
    // adding an e-mail address is an admin's
    supportFix: undefined,
  },
];

describe.each(STORES)("the diagnosis on %s", (_store, start) => {
  const startServer = serverPerTest(start);

  async function world(options: TestServerOptions = {}): Promise<World & { support: Call }> {
    const server = await startServer({ loginRateLimit: { max: 10_000, timeWindowMs: 60_000 }, ...options });
    const admin = await loggedIn(server.app, server.admin.userName, server.admin.password);
    const desk = await insertUser(server.app, { userName: "sue", password: USER_PASSWORD, roles: ["support"] });
    return { server, admin, support: await loggedIn(server.app, desk.userName, desk.password) };
  }

  const diagnose = async (call: Call, id: string) => {
    const response = await call("GET", `/Users/${id}/diagnosis`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as Diagnosis;
  };

  it("finds nothing wrong with a healthy user, and says so", async () => {
    const w = await world();
    const user = await member(w, "hana");
    for (const call of [w.admin, w.support]) {
      const diagnosis = await diagnose(call, user.id);
      expect(diagnosis.healthy).toBe(true);
      expect(diagnosis.reasons).toEqual([]);
      expect(diagnosis.checks.slice(0, 2)).toEqual(["person", "name-backoff"]);
    }
    expect((await tryLogin(w.server.app, user.userName, user.password)).statusCode).toBe(200);
  });

  it.each(SCENARIOS)("names $state, and a real login meets it", async (scenario) => {
    const w = await world(scenario.options);
    const { user, password } = await scenario.make(w);
    const byAdmin = await diagnose(w.admin, user.id);
    expect(byAdmin.healthy).toBe(false);
    expect(byAdmin.reasons.map((r) => r.code)).toEqual([scenario.state]);
    const bySupport = (await diagnose(w.support, user.id)).reasons[0]!;
    if (scenario.supportFix) expect(bySupport.fix?.command).toMatch(scenario.supportFix);
    else {
      expect(bySupport.fix).toMatchObject({ by: "admin" });
      expect(bySupport.fix?.command).toBeUndefined();
    }
    scenario.login(await tryLogin(w.server.app, user.userName, password));
    if (scenario.reason) {
      const trail = (
        await w.admin(
          "GET",
          `/audit?filter=${encodeURIComponent(`action eq "login" and outcome ne "success" and target.id eq "${user.id}"`)}`,
        )
      ).json() as { data: { id: string; details: { reason?: string } }[] };
      const last = trail.data.sort((a, b) => (a.id < b.id ? 1 : -1))[0];
      expect(last?.details.reason).toBe(scenario.reason);
    }
  });

  it("refuses members, and answers 404 for an unknown id", async () => {
    const w = await world();
    const user = await member(w, "max");
    const own = caller(w.server.app, (await login(w.server.app, user.userName, user.password)).token);
    expect((await own("GET", `/Users/${user.id}/diagnosis`)).statusCode).toBe(403);
    expect((await w.support("GET", "/Users/no-such-id/diagnosis")).statusCode).toBe(404);
  });
});
