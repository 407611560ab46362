import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Behind `--trust-proxy` the client address, and so the rate-limit budget, is the one the proxy in
 * front reports (the right-most X-Forwarded-For entry); whatever a client writes before it is not.
 */
const SCENARIOS: { name: string; trustProxy: boolean; forwardedFor: (i: number) => string; limited: boolean }[] = [
  {
    name: "behind a proxy, a client varying the left-most entry keeps its own budget",
    trustProxy: true,
    forwardedFor: (i) => `198.51.100.${i}, 203.0.113.7`,
    limited: true,
  },
  {
    name: "behind a proxy, clients the proxy tells apart have budgets of their own",
    trustProxy: true,
    forwardedFor: (i) => `203.0.113.${i}`,
    limited: false,
  },
  {
    name: "without --trust-proxy the header is ignored: one peer, one budget",
    trustProxy: false,
    forwardedFor: (i) => `203.0.113.${i}`,
    limited: true,
  },
];

describe.each(SCENARIOS)("$name", ({ trustProxy, forwardedFor, limited }) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ trustProxy, loginRateLimit: { max: 3, timeWindowMs: 60_000 } });
  });
  afterAll(async () => server?.close());

  it(limited ? "refuses the fourth attempt with 429" : "lets every attempt reach the password check", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 6; i++) {
      const response = await server.app.inject({
        method: "POST",
        url: "/auth/login",
        remoteAddress: "127.0.0.1",
        headers: { "x-forwarded-for": forwardedFor(i) },
        payload: { userName: "nobody", password: "wrong password for nobody 1" },
      });
      statuses.push(response.statusCode);
    }
    expect(statuses).toEqual(limited ? [401, 401, 401, 429, 429, 429] : [401, 401, 401, 401, 401, 401]);
  });
});
