import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { TOTP, totpCode } from "../../src/server/services/totp.js";
import { STORES } from "../helpers/postgres.js";
import { findPython } from "../helpers/python.js";
import { type Call, manualClock, problemOf, type SignedIn, USER_PASSWORD, useTestServer } from "../helpers/server.js";
import { base32Bytes, independentCode } from "../helpers/totp.js";

/**
 * TOTP second factors (spec 1.7) over HTTP: enrollment, activation with recovery codes, login with
 * a code, replay, recovery codes, removal, and the back-off wrong codes count toward. Every code the
 * tests type is computed here with node:crypto (RFC 4226/6238 by hand) or by python3's standard
 * library, never by the library the server uses.
 */

describe("the TOTP wrapper against RFC 6238 appendix B (SHA-1)", () => {
  const seed = Buffer.from("12345678901234567890", "ascii");
  it.each([
    [59, "94287082"],
    [1111111109, "07081804"],
    [1111111111, "14050471"],
    [1234567890, "89005924"],
    [2000000000, "69279037"],
    [20000000000, "65353130"],
  ])("at %i s the code is %s", (seconds, expected) => {
    expect(totpCode(new Uint8Array(seed), seconds * 1000, 8)).toBe(expected);
    // and the hand-written reference agrees, so the tests below can trust it
    expect(independentCode(seed, seconds * 1000, 8)).toBe(expected);
  });

  it("uses the parameters authenticator apps assume", () => {
    expect(TOTP).toMatchObject({ algorithm: "sha1", digits: 6, period: 30, drift: 1 });
  });
});

const python = findPython(["hmac", "hashlib", "base64", "struct"]);

/** The code python3's standard library computes from a base32 seed at `ms`. */
function pythonCode(secret: string, ms: number): string {
  const script = `
import base64, hashlib, hmac, struct, sys
secret, seconds = sys.argv[1], int(sys.argv[2])
key = base64.b32decode(secret + "=" * (-len(secret) % 8), casefold=True)
mac = hmac.new(key, struct.pack(">Q", seconds // 30), hashlib.sha1).digest()
offset = mac[-1] & 0x0F
value = struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF
print(str(value % 1000000).zfill(6))
`;
  const run = spawnSync(python!, ["-c", script, secret, String(Math.floor(ms / 1000))], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`python3 failed: ${run.stderr}`);
  return run.stdout.trim();
}

const TOTP_PATH = "/auth/mfa/totp";
const STEP_MS = 30_000;

interface Enrolled {
  user: SignedIn;
  key: Buffer;
  secret: string;
  recoveryCodes: string[];
}

describe.each(STORES)("TOTP second factors on %s", (_store, start) => {
  // the middle of a step, so that a step forward or back is a whole step
  const clock = manualClock(new Date("2031-06-01T08:00:15Z"));
  // this file logs in far more often than a person would
  const server = useTestServer({ clock: clock.clock, loginRateLimit: { max: 10_000, timeWindowMs: 60_000 } }, start);
  const now = () => clock.clock().getTime();

  const newUser = (role: "admin" | "member" = "member") =>
    server.signIn({ userName: `${role}-${crypto.randomUUID().slice(0, 8)}`, roles: [role] });
  const loginWith = (user: { userName: string }, otp?: string, password = USER_PASSWORD) =>
    server.anonymous("POST", "/auth/login", { userName: user.userName, password, ...(otp !== undefined && { otp }) });

  /** Enrolls and activates a factor for a fresh user; the next step is where its codes start. */
  async function enrolled(): Promise<Enrolled> {
    const user = await newUser();
    const started = await user.call("POST", TOTP_PATH);
    expect(started.statusCode, started.body).toBe(200);
    const { secret } = started.json() as { secret: string };
    const key = base32Bytes(secret);
    const verified = await user.call("POST", `${TOTP_PATH}/verify`, { code: independentCode(key, now()) });
    expect(verified.statusCode, verified.body).toBe(200);
    // the code of this step is spent: later logins use the next one
    clock.advance(STEP_MS);
    return { user, key, secret, recoveryCodes: (verified.json() as { recoveryCodes: string[] }).recoveryCodes };
  }

  it("enrolls: the seed and its key URI, pending until a first code; then ten recovery codes, once", async () => {
    const user = await newUser();
    expect((await user.call("GET", TOTP_PATH)).json()).toEqual({ enabled: false, pending: false });
    const started = await user.call("POST", TOTP_PATH);
    expect(started.statusCode).toBe(200);
    const { secret, uri } = started.json() as { secret: string; uri: string };
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(uri).toBe(
      `otpauth://totp/bizctl:${user.userName}?secret=${secret}&issuer=bizctl&algorithm=SHA1&digits=6&period=30`,
    );
    expect((await user.call("GET", TOTP_PATH)).json()).toEqual({ enabled: false, pending: true });
    // until it is active, a login needs no code
    expect((await loginWith(user)).statusCode).toBe(200);

    const key = base32Bytes(secret);
    const wrong = String((Number(independentCode(key, now())) + 1) % 1_000_000).padStart(6, "0");
    const refused = problemOf(await user.call("POST", `${TOTP_PATH}/verify`, { code: wrong }), 401, "invalid_otp");
    expect(refused.detail).not.toContain(wrong);

    const verified = await user.call("POST", `${TOTP_PATH}/verify`, { code: independentCode(key, now()) });
    expect(verified.statusCode, verified.body).toBe(200);
    const body = verified.json() as { enabled: boolean; since: string; recoveryCodes: string[] };
    expect(body.enabled).toBe(true);
    expect(Date.parse(body.since)).toBe(now());
    expect(body.recoveryCodes).toHaveLength(10);
    expect(new Set(body.recoveryCodes).size).toBe(10);
    for (const code of body.recoveryCodes) expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);

    expect((await user.call("GET", TOTP_PATH)).json()).toEqual({
      enabled: true,
      pending: false,
      since: body.since,
      recoveryCodesLeft: 10,
    });
    // an active factor is not replaced by a new enrollment, nor activated twice
    // the way out is named for a person at a terminal too, not only as the API's path
    expect(problemOf(await user.call("POST", TOTP_PATH), 409, "conflict").detail).toContain("bizctl auth mfa disable");
    problemOf(await user.call("POST", `${TOTP_PATH}/verify`, { code: "123456" }), 409, "conflict");
  });

  it("refuses to activate what was never started", async () => {
    const user = await newUser();
    problemOf(await user.call("POST", `${TOTP_PATH}/verify`, { code: "123456" }), 404, "not_found");
  });

  it("keeps the seed sealed at rest: the row holds neither it nor its bytes", async () => {
    const { user, secret, key } = await enrolled();
    const row = await server.app.services.store.db
      .selectFrom("totp_factors")
      .selectAll()
      .where("user_id", "=", user.id)
      .executeTakeFirstOrThrow();
    expect(row.sealed_secret).not.toContain(secret);
    expect(row.sealed_secret).not.toContain(key.toString("base64url"));
    expect(row.sealed_secret).not.toContain(key.toString("hex"));
    const codes = await server.app.services.store.db
      .selectFrom("totp_recovery_codes")
      .select("code_hash")
      .where("user_id", "=", user.id)
      .execute();
    expect(codes).toHaveLength(10);
  });

  it("logs in with a code: none is mfa_required, a wrong one invalid_otp, the right one a token", async () => {
    const { user, key } = await enrolled();
    const missing = problemOf(await loginWith(user), 401, "mfa_required");
    expect(missing.detail).toMatch(/otp/);
    problemOf(
      await loginWith(user, "000000" === independentCode(key, now()) ? "000001" : "000000"),
      401,
      "invalid_otp",
    );
    // a wrong password with a right code is a wrong password, and says nothing of the factor
    problemOf(
      await loginWith(user, independentCode(key, now()), "not the password at all"),
      401,
      "invalid_credentials",
    );
    const ok = await loginWith(user, independentCode(key, now()));
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it.each([
    { name: "the code of the step before (a slow clock)", offset: -1, accepted: true },
    { name: "the code of the step after (a fast clock)", offset: 1, accepted: true },
    { name: "a code two steps old", offset: -2, accepted: false },
    { name: "a code two steps ahead", offset: 2, accepted: false },
  ])("accepts one step of drift: $name", async ({ offset, accepted }) => {
    const { user, key } = await enrolled();
    clock.advance(2 * STEP_MS);
    const answer = await loginWith(user, independentCode(key, now() + offset * STEP_MS));
    if (accepted) expect(answer.statusCode, answer.body).toBe(200);
    else problemOf(answer, 401, "invalid_otp");
  });

  it("accepts a code once: a replay in the same step, or an earlier step's code after a later one, is refused", async () => {
    const { user, key } = await enrolled();
    const code = independentCode(key, now());
    expect((await loginWith(user, code)).statusCode).toBe(200);
    problemOf(await loginWith(user, code), 401, "invalid_otp");
    // the next step's code (drift) is accepted; the current one, older, no longer is
    clock.advance(STEP_MS);
    const next = independentCode(key, now() + STEP_MS);
    expect((await loginWith(user, next)).statusCode).toBe(200);
    problemOf(await loginWith(user, independentCode(key, now())), 401, "invalid_otp");
    problemOf(await loginWith(user, next), 401, "invalid_otp");
  });

  it("takes each recovery code once, in any case and with or without dashes", async () => {
    const { user, recoveryCodes } = await enrolled();
    const [first, second] = recoveryCodes as [string, string];
    const byFirst = await loginWith(user, first);
    expect(byFirst.statusCode).toBe(200);
    // the login answer says how many are left, for the person to know before they run out
    expect(byFirst.json()).toMatchObject({ recoveryCodesLeft: 9 });
    problemOf(await loginWith(user, first), 401, "invalid_otp");
    const bySecond = await loginWith(user, second.replaceAll("-", "").toUpperCase());
    expect(bySecond.statusCode).toBe(200);
    expect(bySecond.json()).toMatchObject({ recoveryCodesLeft: 8 });
    const status = (await user.call("GET", TOTP_PATH)).json() as { recoveryCodesLeft: number };
    expect(status.recoveryCodesLeft).toBe(8);
  });

  it.runIf(python)("interoperates: python3's hmac computes the code from the seed the server answered", async () => {
    const user = await newUser();
    const { secret } = (await user.call("POST", TOTP_PATH)).json() as { secret: string };
    const activated = await user.call("POST", `${TOTP_PATH}/verify`, { code: pythonCode(secret, now()) });
    expect(activated.statusCode, activated.body).toBe(200);
    clock.advance(STEP_MS);
    const code = pythonCode(secret, now());
    expect(code).toBe(independentCode(base32Bytes(secret), now()));
    const ok = await loginWith(user, code);
    expect(ok.statusCode, ok.body).toBe(200);
  });

  describe("removal", () => {
    const remove = (call: Call, password: string, code: string) => call("DELETE", TOTP_PATH, { password, code });

    it.each([
      { proof: "a TOTP code", code: (e: Enrolled) => independentCode(e.key, now()) },
      { proof: "a recovery code", code: (e: Enrolled) => e.recoveryCodes[3]! },
    ])("takes the password and $proof; then a login needs no code", async ({ code }) => {
      const factor = await enrolled();
      const { user } = factor;
      problemOf(await remove(user.call, "not the password at all", code(factor)), 401, "invalid_credentials");
      problemOf(await remove(user.call, USER_PASSWORD, "000000"), 401, "invalid_otp");
      const removed = await remove(user.call, USER_PASSWORD, code(factor));
      expect(removed.statusCode, removed.body).toBe(204);
      expect((await user.call("GET", TOTP_PATH)).json()).toEqual({ enabled: false, pending: false });
      expect((await loginWith(user)).statusCode).toBe(200);
      problemOf(await remove(user.call, USER_PASSWORD, code(factor)), 404, "not_found");
      // a new enrollment may start
      expect((await user.call("POST", TOTP_PATH)).statusCode).toBe(200);
    });
  });

  it.each([
    { where: "at login", attempt: (e: Enrolled) => loginWith(e.user, "000000") },
    {
      where: "when removing",
      attempt: (e: Enrolled) => e.user.call("DELETE", TOTP_PATH, { password: USER_PASSWORD, code: "000000" }),
    },
  ])("counts wrong codes $where toward the account's back-off", async ({ attempt }) => {
    const factor = await enrolled();
    // "000000" could be the right code of this step: a step where it is not
    while (["000000"].includes(independentCode(factor.key, now()))) clock.advance(STEP_MS);
    for (let i = 0; i < 5; i++) problemOf(await attempt(factor), 401, "invalid_otp");
    const locked = problemOf(await loginWith(factor.user, independentCode(factor.key, now())), 429, "account_locked");
    expect(locked.detail).not.toContain("000000");
    // the back-off ends; the right code works then
    clock.advance(16_000);
    const ok = await loginWith(factor.user, independentCode(factor.key, now()));
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it("audits enrollment, activation and removal, with no seed or code in any record", async () => {
    const factor = await enrolled();
    const code = independentCode(factor.key, now());
    expect((await factor.user.call("DELETE", TOTP_PATH, { password: USER_PASSWORD, code })).statusCode).toBe(204);
    const filter = encodeURIComponent(`target.id eq "${factor.user.id}"`);
    const answer = await server.call("GET", `/audit?pagesize=500&filter=${filter}`);
    expect(answer.statusCode, answer.body).toBe(200);
    const records = (answer.json() as { data: { action: string; outcome: string }[] }).data;
    const actions = records.map((r) => `${r.action}:${r.outcome}`);
    expect(actions).toEqual(
      expect.arrayContaining(["mfa.enroll:success", "mfa.activate:success", "mfa.remove:success"]),
    );
    for (const secretThing of [
      factor.secret,
      code,
      ...factor.recoveryCodes,
      ...factor.recoveryCodes.map((c) => c.replaceAll("-", "")),
    ]) {
      expect(answer.body).not.toContain(secretThing);
    }
  });
});
