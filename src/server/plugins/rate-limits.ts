import rateLimit from "@fastify/rate-limit";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import type { Redis } from "ioredis";

/** Where the per-client counters live: what the start-up log says. */
export type RateLimitStore =
  | { store: "memory"; shared: false }
  | { store: "redis"; shared: true; redis: string; prefix: string };

export interface RateLimits {
  describe: RateLimitStore;
  /** true when Redis answers a PING (in bounded time); absent without Redis */
  probe?: () => Promise<boolean>;
}

/**
 * ioredis waits for ever by default; @fastify/rate-limit's README asks for a short connect timeout
 * and few retries. The command timeout bounds a Redis that accepts the connection but never answers;
 * the disconnect timeout bounds a shutdown during an outage (ioredis then waits for a socket that
 * has already failed to close).
 */
const REDIS_BOUNDS = {
  connectTimeout: 1000,
  commandTimeout: 1000,
  maxRetriesPerRequest: 1,
  disconnectTimeout: 200,
} as const;
/** an outage is reported at most once a minute: ioredis reports every failed reconnection */
const WARN_EVERY_MS = 60_000;

/** The URL without its password, for logs. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(not a URL)";
  }
}

/** Logs an outage once a minute at most, and its end once. */
function reportOutages(redis: Redis, log: FastifyBaseLogger, where: string): void {
  let lastWarning = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  let warned = false;
  redis.on("error", (error: Error) => {
    const now = performance.now();
    if (now - lastWarning < WARN_EVERY_MS) {
      suppressed += 1;
      return;
    }
    log.warn(
      { redis: where, error: error.message, suppressed },
      "Redis is not reachable: per-client rate limits are not enforced until it is back (fail-open); per-account back-off still applies",
    );
    lastWarning = now;
    suppressed = 0;
    warned = true;
  });
  redis.on("ready", () => {
    if (!warned) return;
    warned = false;
    log.info({ redis: where }, "Redis is reachable again: per-client rate limits are shared again");
  });
}

/** Resolves at the first answer of the connection attempt (ready or failed), or after `ms`. */
function firstContact(redis: Redis, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off("ready", done);
      redis.off("error", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once("ready", done);
    redis.once("error", done);
  });
}

/**
 * Registers @fastify/rate-limit (no global limit: routes opt in with `app.rateLimit()`). With a
 * Redis URL the counters live in Redis under `prefix`, shared by every instance; without one, in
 * this process's memory.
 *
 * Fail-open: when Redis cannot be reached a request is let through rather than refused, so that an
 * outage of Redis does not take logins down; the per-account back-off lives in the database and
 * keeps protecting accounts meanwhile.
 */
export async function installRateLimits(
  app: FastifyInstance,
  options: { redisUrl?: string; prefix: string },
): Promise<RateLimits> {
  if (!options.redisUrl) {
    await app.register(rateLimit, { global: false });
    return { describe: { store: "memory", shared: false } };
  }
  // loaded only here, so that the embedded CLI never pays for the Redis client; a CommonJS module
  // imported this way is its `default` (in Node and in our bundle alike)
  const { Redis } = (await import("ioredis")).default;
  const where = redactRedisUrl(options.redisUrl);
  const redis = new Redis(options.redisUrl, {
    ...REDIS_BOUNDS,
    // while Redis is away a command fails at once instead of waiting in a queue for a reconnection
    enableOfflineQueue: false,
    connectionName: "bizctl",
  });
  reportOutages(redis, app.log, where);
  app.addHook("onClose", async () => {
    // not quit(): it would wait for an answer a dead Redis never gives
    redis.disconnect();
  });
  // bounded: a Redis that is down at start must not keep the server from starting
  await firstContact(redis, REDIS_BOUNDS.connectTimeout);
  await app.register(rateLimit, { global: false, redis, nameSpace: options.prefix, skipOnError: true });
  return {
    describe: { store: "redis", shared: true, redis: where, prefix: options.prefix },
    probe: async () => {
      try {
        return (await redis.ping()) === "PONG";
      } catch {
        return false;
      }
    },
  };
}
