import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/server/app.js";
import { LOCKOUT } from "../../src/server/services/login-backoff.js";
import { outboxReader, resetLinkOf } from "../helpers/mail.js";
import { STORES, TEST_SECRET_KEY } from "../helpers/postgres.js";
import { deleteKeys, freshPrefix, REDIS_URL } from "../helpers/redis.js";
import {
  manualClock,
  NEW_PASSWORD,
  overHttp,
  type SignedIn,
  USER_PASSWORD,
  useTestServer,
  type WireResponse,
} from "../helpers/server.js";
import { base32Bytes, independentCode } from "../helpers/totp.js";

/**
 * Failed proofs sent at once (security review, #41): 48 wrong passwords or codes, 16 at a time over
 * real HTTP, on SQLite and on two PostgreSQL instances over one database. Each proof checked
 * counts, so the account backs off after the threshold and the rest are refused unchecked; the
 * count the database holds is the number of proofs checked and refused. A password reset keeps the
 * failures of an account with a second factor.
 */

const WRONG_PASSWORD = "not the password at all 0000";
const TOTAL = 48;
const AT_ONCE = 16;

describe.each(STORES)("failed proofs sent at once on %s", (store, start) => {
  const clock = manualClock(new Date("2031-06-01T08:00:15Z"));
  // instances share the counts of unknown names through Redis, as a deployment of several should
  const prefix = freshPrefix();
  const options = {
    clock: clock.clock,
    ...(store === "PostgreSQL" && { redisUrl: REDIS_URL, redisPrefix: prefix }),
    publicUrl: "https://bizctl.example.test/",
    loginRateLimit: { max: 100_000, timeWindowMs: 60_000 },
  };
  const server = useTestServer({ ...options, listen: true }, start);
  /** where the proofs go: one instance on SQLite, two over one database on PostgreSQL */
  const urls: string[] = [];
  let closeOther: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    urls.push(server.url);
    if (store !== "PostgreSQL") return;
    const other = await buildApp({
      log: false,
      ...options,
      databaseUrl: server.databaseUrl,
      secretKey: TEST_SECRET_KEY,
      dataDir: server.dataDir,
    });
    closeOther = () => other.close();
    urls.push(await other.listen({ port: 0, host: "127.0.0.1" }));
  });
  afterAll(async () => {
    await closeOther?.();
    await deleteKeys(prefix);
  });

  const post = (url: string, path: string, body: unknown, token?: string) =>
    overHttp(url, "POST", path, {
      headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) },
      body: JSON.stringify(body),
    });

  /** `TOTAL` logins with this body, `AT_ONCE` at a time, spread over the instances. */
  async function burst(body: Record<string, string>): Promise<WireResponse[]> {
    const answers: WireResponse[] = [];
    for (let sent = 0; sent < TOTAL; sent += AT_ONCE) {
      const wave = Array.from({ length: AT_ONCE }, (_, i) =>
        post(urls[(sent + i) % urls.length]!, "/auth/login", body),
      );
      answers.push(...(await Promise.all(wave)));
    }
    return answers;
  }

  const failedLogins = async (userId: string) =>
    (
      await server.app.services.store.db
        .selectFrom("credentials")
        .select("failed_logins")
        .where("user_id", "=", userId)
        .executeTakeFirstOrThrow()
    ).failed_logins;

  /** A fresh member with an e-mail address, and with an active TOTP factor when asked. */
  async function member(withFactor: boolean): Promise<{ id: string; userName: string; key?: Buffer }> {
    const userName = `m-${crypto.randomUUID().slice(0, 8)}`;
    const user = await server.signIn({ userName, roles: ["member"], email: `${userName}@example.com` });
    if (!withFactor) return user;
    return { ...user, key: await enroll(user) };
  }

  async function enroll(user: SignedIn): Promise<Buffer> {
    const started = await user.call("POST", "/auth/mfa/totp");
    const key = base32Bytes((started.json() as { secret: string }).secret);
    const verified = await user.call("POST", "/auth/mfa/totp/verify", {
      code: independentCode(key, clock.clock().getTime()),
    });
    expect(verified.statusCode, verified.body).toBe(200);
    return key;
  }

  /** A wrong code in a step where it is not the right one. */
  const wrongCode = (key: Buffer) => (independentCode(key, clock.clock().getTime()) === "000000" ? "111111" : "000000");

  /** whose proofs: a name that holds no account, a member, a member with an active factor */
  type Holder = "no account" | "member" | "member with a factor";
  const PROOFS: { proof: string; holder: Holder; body: (key?: Buffer) => object; code: string }[] = [
    {
      proof: "wrong passwords",
      holder: "member",
      body: () => ({ password: WRONG_PASSWORD }),
      code: "invalid_credentials",
    },
    {
      proof: "wrong passwords",
      holder: "no account",
      body: () => ({ password: WRONG_PASSWORD }),
      code: "invalid_credentials",
    },
    {
      proof: "wrong TOTP codes",
      holder: "member with a factor",
      body: (key) => ({ password: USER_PASSWORD, otp: wrongCode(key!) }),
      code: "invalid_otp",
    },
    {
      proof: "wrong recovery codes",
      holder: "member with a factor",
      body: () => ({ password: USER_PASSWORD, otp: "abcd-efgh-ijkl-mnop" }),
      code: "invalid_otp",
    },
  ];

  it.each(PROOFS)(
    "counts every one of $proof for a $holder, refusing unchecked those past the threshold",
    async ({ holder, body, code }) => {
      clock.advance(24 * 3600_000);
      const user =
        holder === "no account"
          ? { userName: `nobody-${crypto.randomUUID().slice(0, 8)}` }
          : await member(holder === "member with a factor");
      const answers = await burst({ userName: user.userName, ...body("key" in user ? user.key : undefined) });
      const checked = answers.filter((a) => a.statusCode === 401);
      const refused = answers.filter((a) => a.statusCode === 429);
      for (const answer of checked) expect(JSON.parse(answer.body).code).toBe(code);
      for (const answer of refused) expect(JSON.parse(answer.body).code).toBe("account_locked");
      expect(checked.length + refused.length, answers.map((a) => a.statusCode).join(" ")).toBe(TOTAL);
      // the clock stands still: the back-off that the threshold starts lasts the whole burst
      expect(checked.length).toBe(LOCKOUT.threshold);
      // an unknown name's count is in the counter store, never in the database
      if ("id" in user) expect(await failedLogins(user.id)).toBe(checked.length);
    },
  );

  const outbox = () => outboxReader(server.dataDir);

  it.each([
    { account: "with a second factor, whose wrong codes", factor: true, kept: 4 },
    { account: "without one, whose wrong passwords", factor: false, kept: 0 },
  ])("a password reset of an account $account the count keeps $kept failures", async ({ factor, kept }) => {
    clock.advance(24 * 3600_000);
    const user = await member(factor);
    const wrong = factor ? { password: USER_PASSWORD, otp: wrongCode(user.key!) } : { password: WRONG_PASSWORD };
    for (let i = 0; i < 4; i++)
      expect((await post(urls[0]!, "/auth/login", { userName: user.userName, ...wrong })).statusCode).toBe(401);
    const mails = outbox();
    await mails.take();
    expect((await post(urls[0]!, "/renewPassword", { userName: user.userName })).statusCode).toBe(202);
    await server.app.services.mailer.idle();
    const token = resetLinkOf((await mails.take()).at(-1)!).token;
    const reset = await overHttp(urls[0]!, "PUT", "/resetPassword", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, newPassword: NEW_PASSWORD }),
    });
    expect(reset.statusCode, reset.body).toBe(204);
    expect(await failedLogins(user.id)).toBe(kept);
    if (!factor) return;
    // one more wrong code after the reset starts the back-off: the right code then waits
    const again = { userName: user.userName, password: NEW_PASSWORD };
    clock.advance(30_000);
    expect((await post(urls[0]!, "/auth/login", { ...again, otp: wrongCode(user.key!) })).statusCode).toBe(401);
    const right = { ...again, otp: independentCode(user.key!, clock.clock().getTime()) };
    expect((await post(urls[0]!, "/auth/login", right)).statusCode).toBe(429);
  });
});
