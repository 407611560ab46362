import { readFile, rename, writeFile } from "node:fs/promises";
import type { Redis } from "ioredis";

/** What is known of a name's failures: how many, and when the last one was (ms since 1970). */
export interface Failures {
  count: number;
  lastAt: number;
}

export const NO_FAILURES: Failures = { count: 0, lastAt: 0 };

/** The failures still counted at `now`: forgotten `forgetAfterMs` after the last one. */
export function stillCounted(failures: Failures, now: number, forgetAfterMs: number): Failures {
  return now - failures.lastAt >= forgetAfterMs ? NO_FAILURES : failures;
}

/** How failures back off (services/login-backoff.ts sets it): past `threshold`, `firstMs` doubling at each, to `maxMs`. */
export interface BackOff {
  threshold: number;
  firstMs: number;
  maxMs: number;
}

/** Until when (ms) a name with these failures is refused unchecked; 0 when it is not. */
export function backedOffUntil(failures: Failures, backOff: BackOff): number {
  if (failures.count < backOff.threshold) return 0;
  return failures.lastAt + Math.min(backOff.firstMs * 2 ** (failures.count - backOff.threshold), backOff.maxMs);
}

/** A failure counted before the password is checked (with the count it makes), or the end of the back-off that refuses it. */
export type Reserved = { counted: Failures } | { until: number };

/** reserve() of the stores that hold the failures in this process: the failures `prior` make with one more at `now`. */
function reserveAfter(prior: Failures, now: number, forgetAfterMs: number, backOff: BackOff): Reserved {
  const known = stillCounted(prior, now, forgetAfterMs);
  const until = backedOffUntil(known, backOff);
  return until > now ? { until } : { counted: { count: known.count + 1, lastAt: now } };
}

/**
 * Where the failed logins of names that hold no usable account are counted (services/login-backoff.ts
 * says why and what they cost). Each store forgets a name's failures `forgetAfterMs` after its last.
 */
export interface NameFailures {
  /** for the start-up log: the store and whether instances share it */
  describe(): string;
  get(key: string): Promise<Failures>;
  /**
   * One more failure at `now`, counted before the password is checked, in one step with the
   * decision, so that a burst of guesses at once counts each (forgotten ones left out); none while
   * the name backs off.
   */
  reserve(key: string, now: number, backOff: BackOff): Promise<Reserved>;
  clear(key: string): Promise<void>;
}

/**
 * The failures of the names that hold no usable account, in this process's memory: the most
 * recently failed `maxNames` names are kept (an attacker who invents more pushes the oldest out,
 * a few megabytes at most), each until a day after its last failure.
 */
export function memoryNameFailures(forgetAfterMs: number, maxNames = 100_000): NameFailures {
  const names = new Map<string, Failures>();
  return {
    describe: () => "this process's memory",
    async get(key) {
      return names.get(key) ?? NO_FAILURES;
    },
    async reserve(key, now, backOff) {
      const reserved = reserveAfter(names.get(key) ?? NO_FAILURES, now, forgetAfterMs, backOff);
      if ("until" in reserved) return reserved;
      // re-inserted last: the map's order is the order of the latest failures
      names.delete(key);
      names.set(key, reserved.counted);
      if (names.size > maxNames) names.delete(names.keys().next().value as string);
      return reserved;
    },
    async clear(key) {
      names.delete(key);
    },
  };
}

/**
 * Forgets a stale count, refuses while the name backs off (backedOffUntil, answering {0, until}),
 * else adds one failure and renews the key's expiry (answering {1, count}), in one step on the server.
 */
const RESERVE = `
local t = tonumber(redis.call('HGET', KEYS[1], 't') or '0')
local n = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
local now = tonumber(ARGV[1])
if now - t >= tonumber(ARGV[2]) then n = 0 end
local threshold = tonumber(ARGV[3])
if n >= threshold then
  local ends = t + math.min(tonumber(ARGV[4]) * 2 ^ (n - threshold), tonumber(ARGV[5]))
  if ends > now then return {0, ends} end
end
n = n + 1
redis.call('HSET', KEYS[1], 'n', n, 't', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, n}`;

/** What the Redis store tells when Redis fails or answers again (the rate limiter's log lines). */
export interface RedisHealth {
  lost(error: Error): void;
  back(): void;
}

/**
 * The failures in Redis under `prefix`, shared by every instance; while Redis cannot be reached,
 * in `fallback` (this process's memory), as the per-client rate limits are.
 */
export function redisNameFailures(
  redis: Redis,
  prefix: string,
  fallback: NameFailures,
  health: RedisHealth,
  forgetAfterMs: number,
): NameFailures {
  const keyOf = (key: string) => `${prefix}login-name:${key}`;
  async function shared<T>(work: () => Promise<T>, otherwise: () => Promise<T>): Promise<T> {
    try {
      const result = await work();
      health.back();
      return result;
    } catch (error) {
      health.lost(error as Error);
      return otherwise();
    }
  }
  return {
    describe: () => "Redis, shared by every instance",
    get: (key) =>
      shared(
        async () => {
          const [count, lastAt] = await redis.hmget(keyOf(key), "n", "t");
          return count === null ? NO_FAILURES : { count: Number(count), lastAt: Number(lastAt) };
        },
        () => fallback.get(key),
      ),
    reserve: (key, now, backOff) =>
      shared<Reserved>(
        async () => {
          const args = [now, forgetAfterMs, backOff.threshold, backOff.firstMs, backOff.maxMs];
          const [counted, value] = (await redis.eval(RESERVE, 1, keyOf(key), ...args)) as [number, number];
          return counted === 1 ? { counted: { count: Number(value), lastAt: now } } : { until: Number(value) };
        },
        () => fallback.reserve(key, now, backOff),
      ),
    clear: (key) =>
      shared(
        async () => {
          await redis.del(keyOf(key));
        },
        () => fallback.clear(key),
      ),
  };
}

/**
 * The failures in a small file of the data dir, for the embedded CLI: each command is a process
 * of its own, so its memory would forget a name's failures at the next command, where an
 * account's (in the database) carry over. The `maxNames` most recently failed names are kept,
 * hashed; writers hold a lock (proper-lockfile) around their read-change-write and replace the
 * file atomically.
 */
export function fileNameFailures(file: string, forgetAfterMs: number, maxNames = 1000): NameFailures {
  const read = async (): Promise<Record<string, Failures>> => {
    try {
      return JSON.parse(await readFile(file, "utf8")) as Record<string, Failures>;
    } catch {
      return {};
    }
  };
  async function change(update: (names: Record<string, Failures>) => Reserved | undefined) {
    const { default: lockfile } = await import("proper-lockfile");
    await writeFile(file, "", { flag: "a", mode: 0o600 });
    const release = await lockfile.lock(file, {
      realpath: false,
      stale: 5_000,
      retries: { retries: 40, factor: 1.2, minTimeout: 20, maxTimeout: 1000, randomize: true },
    });
    try {
      const names = await read();
      const result = update(names);
      const kept = Object.entries(names)
        .sort(([, a], [, b]) => b.lastAt - a.lastAt)
        .slice(0, maxNames);
      const temporary = `${file}.${process.pid}.tmp`;
      await writeFile(temporary, JSON.stringify(Object.fromEntries(kept)), { mode: 0o600 });
      await rename(temporary, file);
      return result;
    } finally {
      await release();
    }
  }
  return {
    describe: () => `a file of the data dir (${file})`,
    async get(key) {
      return (await read())[key] ?? NO_FAILURES;
    },
    async reserve(key, now, backOff) {
      return (await change((names) => {
        const reserved = reserveAfter(names[key] ?? NO_FAILURES, now, forgetAfterMs, backOff);
        if ("counted" in reserved) names[key] = reserved.counted;
        return reserved;
      })) as Reserved;
    },
    async clear(key) {
      await change((names) => {
        delete names[key];
        return undefined;
      });
    },
  };
}
