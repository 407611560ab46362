/**
 * Per-client rate limits kept in Redis (`redisUrl`): several instances share one budget, an
 * outage of Redis lets requests through (fail-open) and shows on /ready, and a Redis that comes
 * back is used again. Runs against the machine's shared Redis at 127.0.0.1:6379, each test under
 * a key prefix of its own (the keys expire with the rate-limit window).
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { closedPort } from "../helpers/cli.js";
import {
  ADMIN_PASSWORD,
  ADMIN_USER,
  type InjectResponse,
  problemOf,
  startTestServer,
  type TestServer,
  type TestServerOptions,
} from "../helpers/server.js";

const REDIS_URL = "redis://127.0.0.1:6379";
const CLIENT = "203.0.113.7";
const OTHER_CLIENT = "203.0.113.8";

/** A key prefix no other run uses. */
const freshPrefix = () => `bizctl-test:${crypto.randomUUID()}:`;

const servers: TestServer[] = [];
async function server(options: TestServerOptions): Promise<TestServer> {
  const started = await startTestServer(options);
  servers.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

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

describe("Redis unreachable from the start: fail-open", () => {
  const MAX = 2;
  const BOUND_MS = 2_500;

  it("builds without waiting for Redis, and logins work past the limit without hanging", async () => {
    const logs = logSink();
    const started = performance.now();
    const target = await server({
      loginRateLimit: { max: MAX, timeWindowMs: 60_000 },
      redisUrl: `redis://:a-secret-password@127.0.0.1:${await closedPort()}`,
      redisPrefix: freshPrefix(),
      log: logs.log,
    });
    expect(performance.now() - started).toBeLessThan(BOUND_MS + 2_000);

    const steps = [
      ...Array.from({ length: 2 * MAX }, () => ({ operation: "login" as const, status: 200 })),
      ...Array.from({ length: 2 * MAX }, () => ({ operation: "failedLogin" as const, status: 401 })),
      { operation: "ready" as const, status: 503 },
    ];
    for (const step of steps) {
      const began = performance.now();
      const response = await send(target, step.operation);
      expect(response.statusCode, `${step.operation}: ${response.body}`).toBe(step.status);
      expect(performance.now() - began, step.operation).toBeLessThan(BOUND_MS);
    }

    // ioredis fails a reconnection every few dozen milliseconds; the log says it once
    await new Promise((resolve) => setTimeout(resolve, 500));
    const warnings = logs.warnings(/Redis is not reachable/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(/fail-open/);
    expect(JSON.stringify(logs.lines)).not.toContain("a-secret-password");
  });
});

/** A TCP proxy in front of the shared Redis that the test can cut and restore (Redis itself is never touched). */
async function redisProxy() {
  const sockets = new Set<Socket>();
  let listener: Server | undefined;
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      listener = createServer((client) => {
        const upstream = connect(6379, "127.0.0.1");
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      listener.once("error", reject);
      listener.listen(port, "127.0.0.1", () => resolve((listener!.address() as { port: number }).port));
    });
  const port = await listen(0);
  return {
    url: `redis://127.0.0.1:${port}`,
    cut: async () => {
      await new Promise<void>((resolve) => {
        listener!.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
    restore: () => listen(port),
  };
}

describe("Redis going away while serving", () => {
  it("lets requests through while it is away, reports it, and counts in Redis again once it is back", async () => {
    const MAX = 3;
    const proxy = await redisProxy();
    const logs = logSink();
    const target = await server({
      loginRateLimit: { max: MAX, timeWindowMs: 60_000 },
      redisUrl: proxy.url,
      redisPrefix: freshPrefix(),
      log: logs.log,
    });
    const statuses = async (operation: Operation, times: number) => {
      const out: number[] = [];
      for (let i = 0; i < times; i++) out.push((await send(target, operation)).statusCode);
      return out;
    };

    expect(await statuses("failedLogin", MAX + 1)).toEqual([401, 401, 401, 429]);
    expect((await send(target, "ready")).statusCode).toBe(200);

    await proxy.cut();
    // the client's budget is spent, but the limiter cannot know: it lets the logins through
    expect(await statuses("login", 2)).toEqual([200, 200]);
    problemOf(await send(target, "ready"), 503, "service_unavailable");
    await until("the outage is logged", () => logs.warnings(/Redis is not reachable/).length > 0);

    await proxy.restore();
    await until("Redis is used again", async () => (await send(target, "ready")).statusCode === 200);
    expect(logs.warnings(/Redis is not reachable/)).toHaveLength(1);
    // the count survived in Redis: the client is still over its budget
    expect(await statuses("failedLogin", 1)).toEqual([429]);
    expect(logs.infos(/Redis is reachable again/)).toHaveLength(1);
    await proxy.cut();
  });
});
