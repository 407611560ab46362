import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from "@fastify/rate-limit";
import LocalStore from "@fastify/rate-limit/store/LocalStore.js";
import RedisStore from "@fastify/rate-limit/store/RedisStore.js";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import type { Redis } from "ioredis";
import type { RedisHealth } from "../store/name-failures.js";

/**
 * Where the per-client counters live, as the start-up log and `app.rateLimits` say: with Redis,
 * `shared` is false while it cannot be reached (each instance counts in its own memory then).
 */
export type RateLimitStore =
  | { store: "memory"; shared: false }
  | { store: "redis"; shared: boolean; redis: string; prefix: string };

export interface RateLimits {
  /** where the counters live now */
  describe(): RateLimitStore;
  /** true when Redis answers a PING (in bounded time); absent without Redis */
  probe?: () => Promise<boolean>;
  /** the Redis connection and its health, for the other counters kept there (absent without Redis) */
  redis?: { client: Redis; health: RedisHealth };
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

/**
 * Whether the counters are in Redis now, and the log lines when that changes: one when they leave
 * it (an outage: ioredis reports every failed reconnection, the store every failed command) and
 * one when they are shared again.
 */
class SharedCounters implements RedisHealth {
  shared = true;

  constructor(
    private readonly log: FastifyBaseLogger,
    private readonly where: string,
  ) {}

  lost(error: Error): void {
    if (!this.shared) return;
    this.shared = false;
    this.log.warn(
      { redis: this.where, error: error.message },
      "Redis is not reachable: per-client rate limits and the back-off of unknown names are counted in this instance's memory until it is back (each instance allows the whole budget meanwhile); the back-off of accounts, in the database, still applies",
    );
  }

  back(): void {
    if (this.shared) return;
    this.shared = true;
    this.log.info(
      { redis: this.where },
      "Redis is reachable again: per-client rate limits and the back-off of unknown names are shared again",
    );
  }
}

/**
 * @fastify/rate-limit's Redis store, with its local store behind it: a count Redis cannot take
 * (down, or no answer within the command timeout) is taken in this instance's memory, so that the
 * limit still holds per instance during an outage instead of disappearing. Each limiter (`child`)
 * keeps its own pair.
 */
class RedisOrMemoryStore implements FastifyRateLimitStore {
  constructor(
    private readonly redis: FastifyRateLimitStore,
    private readonly memory: FastifyRateLimitStore,
    private readonly counters: SharedCounters,
    private readonly redisChild: (options: LimiterOptions) => FastifyRateLimitStore,
  ) {}

  incr(...[key, callback, timeWindow, max]: Parameters<FastifyRateLimitStore["incr"]>): void {
    this.redis.incr(
      key,
      (error, result) => {
        if (!error) {
          this.counters.back();
          callback(null, result);
          return;
        }
        this.counters.lost(error);
        this.memory.incr(key, callback, timeWindow, max);
      },
      timeWindow,
      max,
    );
  }

  child(routeOptions: Parameters<FastifyRateLimitStore["child"]>[0]): FastifyRateLimitStore {
    return new RedisOrMemoryStore(
      // typed as a route's options, it is the limiter's merged options with the route as routeInfo
      this.redisChild(routeOptions as unknown as LimiterOptions),
      this.memory.child(routeOptions),
      this.counters,
      this.redisChild,
    );
  }
}

interface LimiterOptions {
  routeInfo?: { method?: string; url?: string };
  continueExceeding?: boolean;
  exponentialBackoff?: boolean;
}

/**
 * The Redis store of one limiter. RedisStore's own child() puts the route's method and URL in
 * the key, and a limiter made by `app.rateLimit()` has no route: its keys were
 * `…undefinedundefined-login:IP`. Such a limiter's keyGenerator names its operation, so its keys
 * are `<prefix>login:IP`; a limiter of a route is `<prefix>POST/auth/login:IP`.
 */
function redisChild(redis: Redis, prefix: string) {
  return (options: LimiterOptions): FastifyRateLimitStore => {
    const route = options.routeInfo;
    const name = route?.method && route.url ? `${route.method}${route.url}:` : "";
    return new RedisStore(
      options.continueExceeding ?? false,
      options.exponentialBackoff ?? false,
      redis,
      `${prefix}${name}`,
    );
  };
}

/** The store class @fastify/rate-limit instantiates with its options. */
function redisOrMemory(redis: Redis, prefix: string, counters: SharedCounters): FastifyRateLimitStoreCtor {
  return class extends RedisOrMemoryStore {
    constructor(options: { continueExceeding?: boolean; exponentialBackoff?: boolean }) {
      const continueExceeding = options.continueExceeding ?? false;
      const exponentialBackoff = options.exponentialBackoff ?? false;
      super(
        new RedisStore(continueExceeding, exponentialBackoff, redis, prefix),
        new LocalStore(continueExceeding, exponentialBackoff),
        counters,
        redisChild(redis, prefix),
      );
    }
  };
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
 * While Redis cannot be reached the counters are kept in this instance's memory: the limit holds
 * per instance (each allows the whole budget), logins keep working, and the per-account back-off
 * in the database protects accounts as always. Neither failing open (no limit at all) nor failing
 * closed (no login at all) during an outage.
 */
export async function installRateLimits(
  app: FastifyInstance,
  options: { redisUrl?: string; prefix: string },
): Promise<RateLimits> {
  if (!options.redisUrl) {
    await app.register(rateLimit, { global: false });
    return { describe: () => ({ store: "memory", shared: false }) };
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
  const counters = new SharedCounters(app.log, where);
  redis.on("error", (error: Error) => counters.lost(error));
  redis.on("ready", () => counters.back());
  app.addHook("onClose", async () => {
    // not quit(): it would wait for an answer a dead Redis never gives
    redis.disconnect();
  });
  // bounded: a Redis that is down at start must not keep the server from starting
  await firstContact(redis, REDIS_BOUNDS.connectTimeout);
  if (redis.status !== "ready") {
    counters.lost(new Error(`no answer within ${REDIS_BOUNDS.connectTimeout} ms (${redis.status})`));
  }
  await app.register(rateLimit, { global: false, store: redisOrMemory(redis, options.prefix, counters) });
  return {
    redis: { client: redis, health: counters },
    describe: () => ({ store: "redis", shared: counters.shared, redis: where, prefix: options.prefix }),
    probe: async () => {
      try {
        return (await redis.ping()) === "PONG";
      } catch {
        return false;
      }
    },
  };
}
