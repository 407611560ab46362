/**
 * `server start --trust-proxy` through the real binary: it takes the proxies' addresses or CIDR
 * ranges (the flag or BIZCTL_TRUST_PROXY), refuses the old switch form and any entry that is not
 * one (exit 2, naming it), and a client that reaches the server directly cannot rotate
 * X-Forwarded-For past the login rate limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bizctl,
  errorOf,
  initDataDir,
  makeSandbox,
  type RunningServer,
  type Sandbox,
  show,
  startServer,
} from "../helpers/cli.js";

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await makeSandbox();
  await initDataDir(sandbox.env);
}, 60_000);
afterAll(async () => sandbox?.remove());

describe("server start refuses a --trust-proxy that does not list proxies (exit 2)", () => {
  const LIST_THEM = /list the addresses of the proxies in front, e\.g\. --trust-proxy 127\.0\.0\.1/;
  const scenarios = [
    { name: "the old switch: true", value: "true", message: /no longer takes 'true'/ },
    { name: "the old switch: 1", value: "1", message: /no longer takes '1'/ },
    { name: "the old switch: yes", value: "yes", message: /no longer takes 'yes'/ },
    { name: "a name", value: "proxy.internal", message: /'proxy\.internal' is not an IP address or CIDR range/ },
    { name: "a bad entry among good ones", value: "10.0.0.0/8,10.0.0.300", message: /'10\.0\.0\.300' is not/ },
    { name: "a prefix too long", value: "10.0.0.0/33", message: /'10\.0\.0\.0\/33' is not/ },
    { name: "every address (/0)", value: "0.0.0.0/0", message: /'0\.0\.0\.0\/0' is not/ },
    { name: "an IPv6 prefix too long", value: "::1/129", message: /'::1\/129' is not/ },
    { name: "an empty entry", value: "127.0.0.1,", message: /'' is not/ },
    { name: "a short IPv4 form", value: "127.1", message: /'127\.1' is not/ },
  ];

  it.each(
    scenarios.flatMap((s) => [
      { ...s, via: "flag" },
      { ...s, via: "BIZCTL_TRUST_PROXY" },
    ]),
  )(
    "$name ($via)",
    async ({ value, message, via }) => {
      const started = await bizctl(
        [
          "server",
          "start",
          "--port",
          "0",
          "--data-dir",
          sandbox.dataDir,
          ...(via === "flag" ? ["--trust-proxy", value] : []),
        ],
        { env: { ...sandbox.env, ...(via === "flag" ? {} : { BIZCTL_TRUST_PROXY: value }) } },
      );
      expect(started.exitCode, show(started)).toBe(2);
      expect(errorOf(started)).toMatchObject({
        code: "usage",
        exitCode: 2,
        message: expect.stringMatching(message),
      });
      expect(errorOf(started).message).toMatch(LIST_THEM);
    },
    60_000,
  );

  it("--trust-proxy without a value", async () => {
    const started = await bizctl(["server", "start", "--port", "0", "--data-dir", sandbox.dataDir, "--trust-proxy"], {
      env: sandbox.env,
    });
    expect(started.exitCode, show(started)).toBe(2);
    expect(started.stderr).toMatch(/--trust-proxy <addresses>/);
  });

  it("--help says what it takes", async () => {
    const help = await bizctl(["server", "start", "--help"], { env: sandbox.env });
    expect(help.stdout.replace(/\s+/g, " ")).toMatch(
      /--trust-proxy <addresses> believe X-Forwarded-\* only from these reverse proxies: IP addresses or CIDR ranges/,
    );
  });
});

describe("a client rotating X-Forwarded-For against server start --trust-proxy", () => {
  const MAX = 5;
  const scenarios = [
    { name: "reaching it directly (not a listed proxy): one budget", trust: "10.0.0.0/8,192.168.1.5", passing: MAX },
    { name: "through a listed proxy: the clients it tells apart", trust: "127.0.0.1", passing: 10 },
  ];
  let server: RunningServer | undefined;
  afterAll(async () => server?.stop());

  it.each(scenarios)(
    "$name",
    async ({ trust, passing }) => {
      server = await startServer(sandbox.dataDir, {
        env: sandbox.env,
        args: ["--trust-proxy", trust, "--login-rate-limit", String(MAX)],
      });
      const statuses: number[] = [];
      for (let i = 1; i <= 10; i++) {
        const response = await fetch(`${server.url}/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-forwarded-for": `198.51.100.${i}` },
          body: JSON.stringify({ userName: `nobody-${i}`, password: "not the password at all 1" }),
        });
        await response.arrayBuffer();
        statuses.push(response.status);
      }
      expect(await server.stop()).toBe(0);
      server = undefined;
      expect(statuses).toEqual([
        ...Array.from({ length: passing }, () => 401),
        ...Array.from({ length: 10 - passing }, () => 429),
      ]);
    },
    60_000,
  );
});
