/**
 * `bizctl server start --redis-url` through the real binary: what the start-up log says about
 * the rate limits, /ready, a clean stop, and one budget across two running servers. Uses the
 * machine's shared Redis at 127.0.0.1:6379 under key prefixes of its own.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  bizctl,
  cleanEnv,
  closedPort,
  type Env,
  errorOf,
  initDataDir,
  makeSandbox,
  type RunningServer,
  show,
  startServer,
} from "../helpers/cli.js";

const REDIS_URL = "redis://127.0.0.1:6379";
const freshPrefix = () => `bizctl-e2e:${crypto.randomUUID()}:`;

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

function logLines(server: RunningServer): LogLine[] {
  return server
    .logs()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as LogLine);
}

/** The first log line matching `about`, waiting for it: stdout and stderr arrive independently. */
async function logLine(server: RunningServer, about: RegExp): Promise<LogLine> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = logLines(server).find((line) => about.test(line.msg));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no log line matching ${about} in:\n${server.logs()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `server start` on a fresh sandbox with these flags and environment additions. */
async function start(args: string[], env: Env = {}): Promise<RunningServer> {
  const sandbox = await makeSandbox();
  cleanups.push(() => sandbox.remove());
  await initDataDir(sandbox.env);
  const server = await startServer(sandbox.dataDir, { env: { ...sandbox.env, ...env }, args });
  cleanups.push(() => server.stop());
  return server;
}

describe("server start and the rate-limit store", () => {
  const PASSWORD_IN_URL = "not-a-real-redis-password";
  const scenarios = [
    {
      name: "--redis-url: shared through Redis",
      setup: async (prefix: string) => ({ args: ["--redis-url", REDIS_URL, "--redis-prefix", prefix], env: {} }),
      says: /per-client rate limits and the back-off of unknown names are shared with every instance through Redis/,
      level: 30,
      rateLimits: { store: "redis", shared: true },
      ready: { status: 200, checks: { database: "ok", redis: "ok" } },
    },
    {
      name: "BIZCTL_REDIS_URL and BIZCTL_REDIS_PREFIX: the same",
      setup: async (prefix: string) => ({
        args: [],
        env: { BIZCTL_REDIS_URL: REDIS_URL, BIZCTL_REDIS_PREFIX: prefix },
      }),
      says: /per-client rate limits and the back-off of unknown names are shared with every instance through Redis/,
      level: 30,
      rateLimits: { store: "redis", shared: true },
      ready: { status: 200, checks: { database: "ok", redis: "ok" } },
    },
    {
      name: "no Redis: the log says the limits are per instance",
      setup: async () => ({ args: [], env: {} }),
      says: /per-client rate limits and the back-off of unknown names are kept per instance, in memory \(no --redis-url\)/,
      level: 30,
      rateLimits: { store: "memory", shared: false },
      ready: { status: 200, checks: { database: "ok" } },
    },
    {
      name: "Redis unreachable: it starts, warns that it counts in memory, and /ready is 503",
      setup: async (prefix: string) => ({
        args: ["--redis-url", `redis://:${PASSWORD_IN_URL}@127.0.0.1:${await closedPort()}`, "--redis-prefix", prefix],
        env: {},
      }),
      says: /Redis is not reachable: per-client rate limits and the back-off of unknown names are counted in this instance's memory/,
      level: 40,
      rateLimits: { store: "redis", shared: false },
      ready: { status: 503, checks: { database: "ok", redis: "down" } },
    },
  ];

  it.each(scenarios)("$name", async ({ setup, says, level, rateLimits: expected, ready }) => {
    const prefix = freshPrefix();
    const { args, env } = await setup(prefix);
    const server = await start(args, env);

    const line = await logLine(server, says);
    expect(line.level).toBe(level);
    const { rateLimits } = await logLine(server, /^per-client rate limits and the back-off of unknown names are/);
    expect(rateLimits).toMatchObject(expected.store === "redis" ? { ...expected, prefix } : expected);

    const response = await fetch(`${server.url}/ready`);
    expect(response.status).toBe(ready.status);
    expect(await response.json()).toMatchObject({ checks: ready.checks });

    // the Redis client is closed with the app: nothing keeps the process alive after SIGTERM
    // (timed from the signal to the exit; stop() then checks the answers the server sent)
    const exited = new Promise<number | null>((done) => server.process.once("exit", (code) => done(code)));
    const began = performance.now();
    server.process.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(performance.now() - began).toBeLessThan(1_500);
    await server.stop();
    expect(server.logs()).not.toContain(PASSWORD_IN_URL);
  });

  it("two servers on one Redis prefix let at most --login-rate-limit failed logins through from one client", async () => {
    const prefix = freshPrefix();
    const args = ["--login-rate-limit", "5", "--redis-url", REDIS_URL, "--redis-prefix", prefix];
    const servers = [await start(args), await start(args)];
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const response = await fetch(`${servers[i % 2]!.url}/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ userName: `nobody-${i}`, password: "not the password at all 1" }),
      });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    expect(statuses.filter((s) => s !== 429)).toEqual([401, 401, 401, 401, 401]);
  });
});

describe("server start with Redis unreachable", () => {
  it("counts in memory: --login-rate-limit failed logins, then 429 rate_limited; the log says so once", async () => {
    const server = await start([
      "--login-rate-limit",
      "3",
      "--redis-url",
      `redis://127.0.0.1:${await closedPort()}`,
      "--redis-prefix",
      freshPrefix(),
    ]);
    const statuses: number[] = [];
    let limited: unknown;
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${server.url}/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ userName: `nobody-${i}`, password: "not the password at all 1" }),
      });
      const body = await response.json();
      if (response.status === 429) limited = body;
      statuses.push(response.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    expect(limited).toMatchObject({ code: "rate_limited", status: 429 });

    await logLine(
      server,
      /^per-client rate limits and the back-off of unknown names are kept per instance, in memory, until Redis is reachable/,
    );
    expect(await server.stop()).toBe(0);
    const about = logLines(server).filter((line) => /Redis/.test(line.msg));
    expect(about.map((line) => [line.level, line.msg])).toEqual([
      [
        40,
        expect.stringMatching(
          /^Redis is not reachable: per-client rate limits and the back-off of unknown names are counted in this instance's memory/,
        ),
      ],
      [
        30,
        expect.stringMatching(
          /^per-client rate limits and the back-off of unknown names are kept per instance, in memory, until Redis is reachable/,
        ),
      ],
    ]);
  });
});

describe("server start refuses bad Redis options with exit 2", () => {
  const scenarios = [
    {
      name: "an http URL",
      args: ["--redis-url", "http://127.0.0.1:6379"],
      message: /--redis-url must be a redis:\/\//,
    },
    { name: "not a URL", args: ["--redis-url", "127.0.0.1:6379"], message: /--redis-url must be a redis:\/\// },
    { name: "an empty prefix", args: ["--redis-prefix", ""], message: /--redis-prefix must not be empty/ },
  ];

  it.each(scenarios)("$name", async ({ args, message }) => {
    const result = await bizctl(["server", "start", "--port", "0", ...args], { env: cleanEnv() });
    expect(result.exitCode, show(result)).toBe(2);
    expect(errorOf(result)).toMatchObject({ code: "usage", message: expect.stringMatching(message) });
  });
});
