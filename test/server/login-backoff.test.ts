import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/server/app.js";
import { databaseDigest, digestDifference } from "../helpers/db-digest.js";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";
import { deleteKeys, freshPrefix, REDIS_URL } from "../helpers/redis.js";
import {
  createResource,
  type InjectResponse,
  insertUser,
  manualClock,
  type TestServer,
  USER_PASSWORD,
  useTestServer,
} from "../helpers/server.js";

/**
 * The back-off of failed logins is kept by the name typed: a name that holds no account (or a
 * disabled one, or one without a password) backs off exactly as a real account does, with the
 * same answers at the same attempts, shared across instances through Redis as the accounts'
 * through the database, and without a database row per name tried.
 */

const WRONG = "not the password at all 0000";
type Kind = "real" | "unknown" | "disabled" | "without a password";
const KINDS: Kind[] = ["real", "unknown", "disabled", "without a password"];

/** What an answer shows of itself, without the request id and the seconds it names. */
function shape(response: InjectResponse) {
  const body = response.json() as Record<string, unknown>;
  return {
    status: response.statusCode,
    code: body.code,
    detail: String(body.detail).replace(/\d+ s\b/, "N s"),
    retryAfter: response.headers["retry-after"] === undefined ? undefined : "set",
  };
}

const STORES = [
  ["SQLite, unknown names counted in memory", "sqlite", "memory"],
  ["SQLite, unknown names counted in a file of the data dir (the embedded CLI)", "sqlite", "data-dir"],
  ["SQLite, unknown names counted in Redis", "sqlite", "redis"],
  ["PostgreSQL, unknown names counted in Redis", "postgres", "redis"],
] as const;

describe.each(STORES)("the login back-off by name (%s)", (_name, store, counter) => {
  const withRedis = counter === "redis";
  const clock = manualClock(new Date("2027-03-01T09:00:00Z"));
  let dropDatabase: (() => Promise<void>) | undefined;
  const prefix = freshPrefix();
  const names: Record<Kind, string> = {
    real: "ada.real",
    unknown: "nobody.here",
    disabled: "dan.disabled",
    "without a password": "paula.invited",
  };

  let databaseUrl: string | undefined;
  const options = () => ({
    clock: clock.clock,
    loginRateLimit: { max: 100_000, timeWindowMs: 60_000 },
    ...(databaseUrl && { databaseUrl, secretKey: TEST_SECRET_KEY }),
    ...(withRedis && { redisUrl: REDIS_URL, redisPrefix: prefix }),
    ...(counter === "data-dir" && { nameFailuresIn: "data-dir" as const }),
  });

  // runs after the server has closed (hooks after the last test run last to first)
  afterAll(async () => {
    await dropDatabase?.();
    if (withRedis) await deleteKeys(prefix);
  });
  const server = useTestServer(async () => {
    const database = store === "postgres" ? await createTestDatabase() : undefined;
    dropDatabase = database?.drop;
    databaseUrl = database?.url;
    return options();
  });
  const admin = server.call;

  beforeAll(async () => {
    await insertUser(server.app, { userName: names.real, password: USER_PASSWORD, roles: ["member"] });
    const disabled = await insertUser(server.app, {
      userName: names.disabled,
      password: USER_PASSWORD,
      roles: ["member"],
    });
    const current = (await admin("GET", `/Resources/${disabled.id}`)).json() as Record<string, unknown>;
    expect((await admin("PUT", `/Resources/${disabled.id}`, { ...current, active: false })).statusCode).toBe(200);
    await createResource(admin, { resourceType: "User", userName: names["without a password"] });
  });

  const attempt = (app: TestServer["app"], userName: string) =>
    app.inject({ method: "POST", url: "/auth/login", payload: { userName, password: WRONG } });

  /** The shapes of `n` wrong logins of each kind of name, as of the clock now. */
  async function attempts(n: number, app = server.app) {
    const out = {} as Record<Kind, ReturnType<typeof shape>[]>;
    for (const kind of KINDS) {
      out[kind] = [];
      for (let i = 0; i < n; i++) out[kind].push(shape(await attempt(app, names[kind])));
    }
    return out;
  }

  it("answers every kind of name alike: 401 five times, then 429 account_locked with Retry-After", async () => {
    const seen = await attempts(7);
    for (const kind of KINDS) expect(seen[kind], kind).toEqual(seen.real);
    expect(seen.real.map((s) => s.status)).toEqual([401, 401, 401, 401, 401, 429, 429]);
    expect(seen.real[5]).toMatchObject({ code: "account_locked", retryAfter: "set" });
  });

  it("lets each name try again when its back-off ends, and backs it off twice as long at the next failure", async () => {
    clock.advance(16_000);
    const next = await attempts(2);
    for (const kind of KINDS)
      expect(
        next[kind].map((s) => s.status),
        kind,
      ).toEqual([401, 429]);
    clock.advance(16_000);
    for (const kind of KINDS) expect((await attempt(server.app, names[kind])).statusCode, kind).toBe(429);
  });

  it("forgets failures a day after the last one, for every kind of name", async () => {
    clock.advance(24 * 3600_000);
    const fresh = await attempts(4);
    for (const kind of KINDS)
      expect(
        fresh[kind].map((s) => s.status),
        kind,
      ).toEqual([401, 401, 401, 401]);
  });

  it.runIf(counter !== "memory")("shares the back-off of every kind of name with another instance", async () => {
    // a second instance on the same database
    const other = await buildApp({ log: false, ...options(), dataDir: server.dataDir });
    try {
      // one more failure each on this instance makes five: the other instance refuses the sixth
      await attempts(1);
      const there = await attempts(1, other);
      for (const kind of KINDS) expect(there[kind][0], kind).toMatchObject({ status: 429, code: "account_locked" });
    } finally {
      await other.close();
    }
  });

  it("writes no database row for a name it does not know", async () => {
    clock.advance(24 * 3600_000);
    const before = await databaseDigest(server.app.services.store.db);
    for (let i = 0; i < 30; i++) await attempt(server.app, `invented-${i}-${crypto.randomUUID()}`);
    const after = await databaseDigest(server.app.services.store.db);
    expect(after.hash, digestDifference(before, after)).toBe(before.hash);
  });
});
