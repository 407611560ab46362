/**
 * Per-client rate limits kept in Redis (`redisUrl`): several instances share one budget; while
 * Redis cannot be reached each instance counts in its own memory (the log says so once, /ready
 * shows it), and a Redis that comes back is used again. Runs against the machine's shared Redis at 127.0.0.1:6379, each test under
 * a key prefix of its own (the keys expire with the rate-limit window).
 */
import { createServer, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { closedPort } from "../helpers/cli.js";
import {
  ADMIN_PASSWORD,
  ADMIN_USER,
  type InjectResponse,
  problemOf,
  serverPerTest,
  type TestServer,
  type TestServerOptions,
} from "../helpers/server.js";
import { startTcpProxy } from "../helpers/tcp-proxy.js";

const REDIS_URL = "redis://127.0.0.1:6379";
const CLIENT = "203.0.113.7";
const OTHER_CLIENT = "203.0.113.8";

/** A key prefix no other run uses. */
const freshPrefix = () => `bizctl-test:${crypto.randomUUID()}:`;

const server = serverPerTest();

type Operation = "login" | "failedLogin" | "renew" | "renewAlias" | "ready";

/** One request as `client`; a failed login uses a fresh user name, so no account backs off. */
function send(target: TestServer, operation: Operation, client = CLIENT): Promise<InjectResponse> {
  const post = (url: string, payload: object) =>
    target.app.inject({ method: "POST", url, payload, remoteAddress: client });
  switch (operation) {
    case "login":
      return post("/auth/login", { userName: ADMIN_USER, password: ADMIN_PASSWORD });
    case "failedLogin":
      return post("/auth/login", { userName: `nobody-${crypto.randomUUID()}`, password: "not the password at all 1" });
    case "renew":
      return post("/renewPassword", { userName: `nobody-${crypto.randomUUID()}` });
    case "renewAlias":
      return post("/auth/renewPassword", { userName: `nobody-${crypto.randomUUID()}` });
    case "ready":
      return target.app.inject({ method: "GET", url: "/ready", remoteAddress: client });
  }
}

/** Waits until `check` holds, polling; fails after `ms`. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Lines written by the app's logger, parsed. */
function logSink() {
  const lines: { level: number; msg: string; [key: string]: unknown }[] = [];
  return {
    lines,
    log: { level: "info", stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
    warnings: (about: RegExp) => lines.filter((l) => l.level === 40 && about.test(l.msg)),
    infos: (about: RegExp) => lines.filter((l) => l.level === 30 && about.test(l.msg)),
  };
}

describe("two instances and one client", () => {
  const MAX = 5;
  const ATTEMPTS = 12;
  // without a shared store each instance allows MAX, so the client gets 2 * MAX through
  const scenarios = [
    { name: "share one budget on one Redis prefix", redis: "same prefix", passing: MAX },
    { name: "count apart on different Redis prefixes", redis: "own prefixes", passing: 2 * MAX },
    { name: "count apart without Redis (limits per instance)", redis: "none", passing: 2 * MAX },
  ] as const;

  it.each(scenarios)("$name", async ({ redis, passing }) => {
    const shared = freshPrefix();
    const options = (): TestServerOptions => ({
      loginRateLimit: { max: MAX, timeWindowMs: 60_000 },
      ...(redis !== "none" && { redisUrl: REDIS_URL, redisPrefix: redis === "same prefix" ? shared : freshPrefix() }),
    });
    const instances = [await server(options()), await server(options())];
    const answers: InjectResponse[] = [];
    for (let i = 0; i < ATTEMPTS; i++) answers.push(await send(instances[i % 2]!, "failedLogin"));

    const limited = answers.filter((a) => a.statusCode === 429);
    expect(answers.length - limited.length).toBe(passing);
    for (const answer of answers.filter((a) => a.statusCode !== 429)) problemOf(answer, 401, "invalid_credentials");
    for (const answer of limited) {
      problemOf(answer, 429, "rate_limited");
      expect(Number(answer.headers["retry-after"])).toBeGreaterThan(0);
    }
    // the first limited answer comes exactly when the budget is spent
    expect(answers.findIndex((a) => a.statusCode === 429)).toBe(passing);
  });
});

describe("budgets kept in Redis", () => {
  const MAX = 3;
  const repeat = (operation: Operation, status: number, client = CLIENT) =>
    Array.from({ length: MAX }, () => ({ operation, client, status }));
  const scenarios = [
    {
      name: "login and renewPassword are counted apart",
      steps: [
        ...repeat("failedLogin", 401),
        { operation: "failedLogin", client: CLIENT, status: 429 },
        ...repeat("renew", 202),
      ],
    },
    {
      name: "the spellings of renewPassword share one budget",
      steps: [...repeat("renew", 202), { operation: "renewAlias", client: CLIENT, status: 429 }],
    },
    {
      name: "another client has a budget of its own",
      steps: [
        ...repeat("failedLogin", 401),
        { operation: "failedLogin", client: CLIENT, status: 429 },
        ...repeat("failedLogin", 401, OTHER_CLIENT),
      ],
    },
  ] as const;

  it.each(scenarios)("$name", async ({ steps }) => {
    const target = await server({
      loginRateLimit: { max: MAX, timeWindowMs: 60_000 },
      redisUrl: REDIS_URL,
      redisPrefix: freshPrefix(),
    });
    const seen: number[] = [];
    for (const step of steps) seen.push((await send(target, step.operation, step.client)).statusCode);
    expect(seen).toEqual(steps.map((s) => s.status));
    await target.app.services.mailer.idle();
  });
});

describe("the keys in Redis", () => {
  it("are named after the operation and the client: <prefix>login:IP, <prefix>renewPassword:IP", async () => {
    const prefix = freshPrefix();
    const target = await server({
      loginRateLimit: { max: 5, timeWindowMs: 60_000 },
      redisUrl: REDIS_URL,
      redisPrefix: prefix,
    });
    await send(target, "failedLogin");
    await send(target, "renew");
    await send(target, "renewAlias", OTHER_CLIENT);
    await target.app.services.mailer.idle();
    const { Redis } = (await import("ioredis")).default;
    const redis = new Redis(REDIS_URL);
    try {
      const keys = (await redis.keys(`${prefix}*`)).map((key) => key.slice(prefix.length));
      // the unknown names' back-off keeps its own keys under the prefix
      expect(keys.filter((key) => !key.startsWith("login-name:")).sort()).toEqual([
        `login:${CLIENT}`,
        `renewPassword:${CLIENT}`,
        `renewPassword:${OTHER_CLIENT}`,
      ]);
    } finally {
      redis.disconnect();
    }
  });
});

describe("/ready names its dependencies", () => {
  const scenarios = [
    { name: "without Redis: the database only", redis: "none", status: 200, checks: { database: "ok" } },
    { name: "with a live Redis", redis: "live", status: 200, checks: { database: "ok", redis: "ok" } },
    { name: "with Redis unreachable: 503", redis: "closed", status: 503, checks: { database: "ok", redis: "down" } },
  ] as const;

  it.each(scenarios)("$name", async ({ redis, status, checks }) => {
    const redisUrl = { none: undefined, live: REDIS_URL, closed: `redis://127.0.0.1:${await closedPort()}` }[redis];
    const target = await server({ ...(redisUrl && { redisUrl, redisPrefix: freshPrefix() }) });
    const response = await send(target, "ready");
    if (status === 200) {
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ status: "ready", checks });
    } else {
      const problem = problemOf(response, 503, "service_unavailable");
      expect(problem).toMatchObject({ checks, detail: "Redis is not reachable." });
    }
  });
});

/** What the log says when the counters leave Redis for this instance's memory, and come back. */
const FELL_BACK =
  /^Redis is not reachable: per-client rate limits and the back-off of unknown names are counted in this instance's memory/;
const SHARED_AGAIN =
  /^Redis is reachable again: per-client rate limits and the back-off of unknown names are shared again/;

describe("Redis unreachable from the start: counted in this instance's memory", () => {
  const MAX = 2;
  const BOUND_MS = 2_500;

  /** A port that accepts connections and never answers: a Redis that hangs. */
  async function silentPort(): Promise<number> {
    const sockets = new Set<Socket>();
    const listener = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy();
          listener.close(() => resolve());
        }),
    );
    return (listener.address() as { port: number }).port;
  }
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it.each([
    { redis: "a closed port", port: closedPort },
    { redis: "a port that never answers", port: silentPort },
  ])(
    "$redis: builds without waiting for Redis, refuses past the limit (429) without hanging, and says so once",
    async ({ port }) => {
      const logs = logSink();
      const started = performance.now();
      const target = await server({
        loginRateLimit: { max: MAX, timeWindowMs: 60_000 },
        redisUrl: `redis://:a-secret-password@127.0.0.1:${await port()}`,
        redisPrefix: freshPrefix(),
        log: logs.log,
      });
      expect(performance.now() - started).toBeLessThan(BOUND_MS + 2_000);
      expect(target.app.rateLimits).toMatchObject({ store: "redis", shared: false });

      const steps = [
        ...Array.from({ length: MAX }, () => ({ operation: "failedLogin" as const, status: 401 })),
        { operation: "failedLogin" as const, status: 429 },
        { operation: "login" as const, status: 429 },
        { operation: "renew" as const, status: 202 },
        { operation: "failedLogin" as const, status: 401, client: OTHER_CLIENT },
        { operation: "ready" as const, status: 503 },
      ];
      for (const step of steps) {
        const began = performance.now();
        const response = await send(target, step.operation, "client" in step ? step.client : CLIENT);
        expect(response.statusCode, `${step.operation}: ${response.body}`).toBe(step.status);
        if (step.status === 429) problemOf(response, 429, "rate_limited");
        expect(performance.now() - began, step.operation).toBeLessThan(BOUND_MS);
      }

      // ioredis fails a reconnection every few dozen milliseconds; the log says it once
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(logs.warnings(/Redis/).map((l) => l.msg)).toEqual([expect.stringMatching(FELL_BACK)]);
      expect(logs.infos(SHARED_AGAIN)).toHaveLength(0);
      expect(JSON.stringify(logs.lines)).not.toContain("a-secret-password");
      await target.app.services.mailer.idle();
    },
  );
});

describe("Redis going away while serving", () => {
  it("counts in this instance's memory while it is away, says so once, and counts in Redis again once it is back", async () => {
    const MAX = 3;
    const proxy = await startTcpProxy("127.0.0.1", 6379);
    const logs = logSink();
    const target = await server({
      loginRateLimit: { max: MAX, timeWindowMs: 60_000 },
      redisUrl: `redis://127.0.0.1:${proxy.port}`,
      redisPrefix: freshPrefix(),
      log: logs.log,
    });
    const statuses = async (operation: Operation, times: number, client = CLIENT) => {
      const out: number[] = [];
      for (let i = 0; i < times; i++) out.push((await send(target, operation, client)).statusCode);
      return out;
    };

    expect(target.app.rateLimits).toMatchObject({ store: "redis", shared: true });
    expect(await statuses("failedLogin", MAX + 1)).toEqual([401, 401, 401, 429]);
    expect((await send(target, "ready")).statusCode).toBe(200);

    await proxy.cut();
    // a fresh budget in memory, for this client and the other: still MAX each
    expect(await statuses("failedLogin", MAX + 1, OTHER_CLIENT)).toEqual([401, 401, 401, 429]);
    expect(await statuses("failedLogin", MAX + 1)).toEqual([401, 401, 401, 429]);
    problemOf(await send(target, "ready"), 503, "service_unavailable");
    expect(target.app.rateLimits).toMatchObject({ store: "redis", shared: false });
    expect(logs.warnings(FELL_BACK)).toHaveLength(1);

    await proxy.restore();
    await until("Redis is used again", async () => (await send(target, "ready")).statusCode === 200);
    await until("the log says it", () => logs.infos(SHARED_AGAIN).length > 0);
    expect(target.app.rateLimits).toMatchObject({ store: "redis", shared: true });
    // the count kept in Redis is the one used again: the client is still over its budget there
    expect(await statuses("failedLogin", 1)).toEqual([429]);
    expect(logs.warnings(/Redis/).map((l) => l.msg)).toEqual([expect.stringMatching(FELL_BACK)]);
    expect(logs.infos(SHARED_AGAIN)).toHaveLength(1);
    await proxy.close();
    await target.app.services.mailer.idle();
  });
});
