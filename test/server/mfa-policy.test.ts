import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SmtpSink, startSmtpSink } from "../helpers/mail.js";
import { STORES } from "../helpers/postgres.js";
import {
  type Call,
  caller,
  manualClock,
  problemOf,
  type SignedIn,
  USER_PASSWORD,
  useTestServer,
} from "../helpers/server.js";
import { base32Bytes, independentCode } from "../helpers/totp.js";

/**
 * The second-factor policy and support's reset (spec 1.7) on both databases: `mfaEnabled` in the
 * account state and its filter; `--require-mfa` confining an unenrolled holder of a required role
 * to enrollment; `DELETE /Resources/{id}/mfa` with its roles, sessions, notice mail and audit.
 */

const TOTP_PATH = "/auth/mfa/totp";
const STEP_MS = 30_000;

type Role = "admin" | "support" | "member";

describe.each(STORES)("second-factor policy and reset on %s", (_store, start) => {
  // the middle of a step, so that a step forward is a whole step
  const clock = manualClock(new Date("2031-06-01T08:00:15Z"));
  let sink: SmtpSink | undefined;
  afterAll(async () => sink?.close());
  const server = useTestServer(async () => {
    sink = await startSmtpSink();
    return {
      clock: clock.clock,
      smtpUrl: sink.url,
      requireMfaRoles: ["admin", "support"],
      loginRateLimit: { max: 10_000, timeWindowMs: 60_000 },
    };
  }, start);
  const admin: Call = (...request) => server.call(...request);
  const now = () => clock.clock().getTime();
  // the first admin is an admin too: enrolled, so that it may act for the tests
  beforeAll(async () => {
    await enroll({ ...server.admin, token: server.token, call: admin });
  });

  const newUser = (role: Role): Promise<SignedIn> => {
    const userName = `${role}-${crypto.randomUUID().slice(0, 8)}`;
    return server.signIn({ userName, roles: [role], email: `${userName}@example.com` });
  };

  /** Enrolls and activates a factor with `user`'s own token; the next step is where its codes start. */
  async function enroll(user: SignedIn): Promise<Buffer> {
    const started = await user.call("POST", TOTP_PATH);
    expect(started.statusCode, started.body).toBe(200);
    const key = base32Bytes((started.json() as { secret: string }).secret);
    const verified = await user.call("POST", `${TOTP_PATH}/verify`, { code: independentCode(key, now()) });
    expect(verified.statusCode, verified.body).toBe(200);
    clock.advance(STEP_MS);
    return key;
  }

  const loginBody = async (userName: string, otp?: string) => {
    const response = await server.anonymous("POST", "/auth/login", {
      userName,
      password: USER_PASSWORD,
      ...(otp !== undefined && { otp }),
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { token: string; mfaEnrollmentRequired?: boolean };
  };

  const stateOf = async (id: string) =>
    (await admin("GET", `/Resources/${id}`)).json() as { mfaEnabled: boolean; openSessions: number };

  describe("--require-mfa admin,support", () => {
    it.each<[Role, boolean]>([
      ["admin", true],
      ["support", true],
      ["member", false],
    ])("a %s without a factor: confined to enrollment %s", async (role, confined) => {
      const user = await newUser(role);
      const body = await loginBody(user.userName);
      expect(body.mfaEnrollmentRequired).toBe(confined ? true : undefined);
      const answer = await caller(server.app, body.token)("GET", "/Resources?resourcetypes=User&count=1");
      if (confined) problemOf(answer, 403, "mfa_enrollment_required");
      else expect(answer.statusCode, answer.body).toBe(200);
    });

    it.each<[method: "GET" | "POST", path: string, status: number]>([
      ["GET", "/auth/isLogged", 200],
      ["GET", TOTP_PATH, 200],
      ["POST", TOTP_PATH, 200],
      ["GET", "/Resources?resourcetypes=User", 403],
      ["GET", "/api/crm/v1/events", 403],
      ["GET", "/auth/sessions", 403],
      ["GET", "/auth/isFirstLogin", 403],
      ["GET", "/audit", 403],
      ["POST", "/auth/tokens", 403],
      ["POST", "/auth/logout", 204],
    ])("an unenrolled admin's token: %s %s answers %i", async (method, path, status) => {
      const user = await newUser("admin");
      const call = caller(server.app, (await loginBody(user.userName)).token);
      const answer = await call(method, path, method === "POST" && path === "/auth/tokens" ? { name: "x" } : undefined);
      expect(answer.statusCode, answer.body).toBe(status);
      if (status === 403) problemOf(answer, 403, "mfa_enrollment_required");
    });

    it("lifts the confinement as the factor is verified: the same token works, without a new login", async () => {
      const user = await newUser("admin");
      problemOf(await user.call("GET", "/Resources?count=1"), 403, "mfa_enrollment_required");
      const key = await enroll(user);
      expect((await user.call("GET", "/Resources?count=1")).statusCode).toBe(200);
      // and an enrolled admin's login is not confined
      const body = await loginBody(user.userName, independentCode(key, now()));
      expect(body.mfaEnrollmentRequired).toBeUndefined();
      expect((await caller(server.app, body.token)("GET", "/Resources?count=1")).statusCode).toBe(200);
    });

    it("confines the API tokens of a user whose factor was reset, as a login without one", async () => {
      const user = await newUser("support");
      await enroll(user);
      const created = await user.call("POST", "/auth/tokens", { name: "nightly", scopes: ["resources:read"] });
      expect(created.statusCode, created.body).toBe(201);
      const token = caller(server.app, (created.json() as { token: string }).token);
      expect((await token("GET", "/Resources?count=1")).statusCode).toBe(200);
      const reset = await admin("DELETE", `/Resources/${user.id}/mfa?reason=${encodeURIComponent("lost phone")}`);
      expect(reset.statusCode, reset.body).toBe(200);
      problemOf(await token("GET", "/Resources?count=1"), 403, "mfa_enrollment_required");
    });

    it("asks a temporary password's change first: the first-login routes stay open", async () => {
      const user = await server.signIn({
        userName: `temp-${crypto.randomUUID().slice(0, 8)}`,
        roles: ["admin"],
        temporary: true,
      });
      problemOf(await user.call("POST", TOTP_PATH), 403, "password_change_required");
      expect((await user.call("GET", "/auth/isFirstLogin")).statusCode).toBe(200);
    });
  });

  describe("mfaEnabled in the account state", () => {
    it("shows and filters it", async () => {
      const enrolled = await newUser("member");
      const plain = await newUser("member");
      await enroll(enrolled);
      expect((await stateOf(enrolled.id)).mfaEnabled).toBe(true);
      expect((await stateOf(plain.id)).mfaEnabled).toBe(false);
      const names = async (filter: string) => {
        const q = encodeURIComponent(`${filter} and userName sw "member-"`);
        const response = await admin("GET", `/Resources?resourcetypes=User&count=500&filter=${q}`);
        expect(response.statusCode, response.body).toBe(200);
        return (response.json() as { Resources: { userName: string }[] }).Resources.map((u) => u.userName);
      };
      expect(await names("mfaEnabled eq true")).toContain(enrolled.userName);
      expect(await names("mfaEnabled eq true")).not.toContain(plain.userName);
      expect(await names("mfaEnabled eq false")).toContain(plain.userName);
      expect(await names("mfaEnabled eq false")).not.toContain(enrolled.userName);
      // not something a write sets
      const member = (await admin("GET", `/Resources/${plain.id}`)).json() as Record<string, unknown>;
      expect(member).toHaveProperty("mfaEnabled", false);
    });
  });

  describe("DELETE /Resources/{id}/mfa", () => {
    let support: SignedIn;
    beforeAll(async () => {
      support = await newUser("support");
      await enroll(support);
    });

    it("support resets a member's factor: sessions ended, notice mailed, audited with the reason", async () => {
      const member = await newUser("member");
      await enroll(member);
      expect((await stateOf(member.id)).openSessions).toBe(1);
      const reason = "lost phone, ticket 4711";
      const reset = await support.call("DELETE", `/Resources/${member.id}/mfa?reason=${encodeURIComponent(reason)}`);
      expect(reset.statusCode, reset.body).toBe(200);
      expect(reset.json()).toEqual({ sessionsEnded: 1, noticeQueued: true });
      problemOf(await member.call("GET", "/auth/isLogged"), 401, "token_revoked");
      expect(await stateOf(member.id)).toMatchObject({ mfaEnabled: false, openSessions: 0 });
      const codes = await server.app.services.store.db
        .selectFrom("totp_recovery_codes")
        .select("code_hash")
        .where("user_id", "=", member.id)
        .execute();
      expect(codes).toEqual([]);
      // the password alone logs in again
      expect((await loginBody(member.userName)).token).toBeTruthy();

      await server.app.services.mailer.idle();
      const mail = await sink!.waitFor((m) => m.rcptTo.includes(`${member.userName}@example.com`));
      expect(mail.subject).toBe("The second factor of your bizctl account was removed");
      expect(mail.text).toContain(support.userName);

      const filter = encodeURIComponent(`action eq "mfa.reset" and target.id eq "${member.id}"`);
      const records = (await admin("GET", `/audit?filter=${filter}`)).json() as {
        data: { actor?: { userName?: string }; outcome: string; details?: Record<string, unknown> }[];
      };
      expect(records.data).toHaveLength(1);
      expect(records.data[0]).toMatchObject({
        actor: { userName: support.userName },
        outcome: "success",
        details: { reason, sessionsEnded: 1, noticeQueued: true },
      });
    });

    it.each<[actor: "admin" | "support", target: Role, status: number, code?: string]>([
      ["support", "admin", 403, "forbidden"],
      ["support", "support", 403, "forbidden"],
      ["admin", "admin", 200],
      ["admin", "member", 200],
    ])("%s on a %s's factor answers %i", async (actor, target, status, code) => {
      const user = await newUser(target);
      await enroll(user);
      const call = actor === "admin" ? admin : support.call;
      const answer = await call("DELETE", `/Resources/${user.id}/mfa`);
      if (code) problemOf(answer, status, code);
      else expect(answer.statusCode, answer.body).toBe(status);
      expect((await stateOf(user.id)).mfaEnabled).toBe(status !== 200);
    });

    it("refuses support on its own factor, a member altogether, and 404s without a factor or a user", async () => {
      problemOf(await support.call("DELETE", `/Resources/${support.id}/mfa`), 403, "forbidden");
      const member = await newUser("member");
      const other = await newUser("member");
      await enroll(other);
      problemOf(await member.call("DELETE", `/Resources/${other.id}/mfa`), 403, "forbidden");
      problemOf(await admin("DELETE", `/Resources/${member.id}/mfa`), 404, "not_found");
      problemOf(await admin("DELETE", `/Resources/${crypto.randomUUID()}/mfa`), 404, "not_found");
      problemOf(await admin("DELETE", `/Resources/${other.id}/mfa?reason=`), 400, "validation_failed");
      const filter = encodeURIComponent(
        `action eq "mfa.reset" and outcome eq "forbidden" and actor.id eq "${support.id}"`,
      );
      expect(
        ((await admin("GET", `/audit?filter=${filter}`)).json() as { data: unknown[] }).data.length,
      ).toBeGreaterThan(0);
    });
  });
});
