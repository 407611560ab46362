import { describe, expect, it } from "vitest";
import { ADMIN_PASSWORD, ADMIN_USER, bearer, problemOf, serverPerTest } from "../helpers/server.js";

/**
 * `--trust-proxy` lists the proxies in front (addresses or CIDR ranges): X-Forwarded-For is
 * believed only from a peer in the list, and only the hops in the list are skipped, so the client
 * address (the one the audit trail, the session and the rate limiter use) is the first untrusted
 * one from the right. A client reaching the server directly cannot choose its address, nor with it
 * a fresh rate-limit budget.
 */

const server = serverPerTest();

const CLIENT = "198.51.100.7";
const DIRECT = "203.0.113.9";

const SCENARIOS: { name: string; trust?: string[]; peer: string; forwardedFor: string; client: string }[] = [
  { name: "no list: the header is ignored", peer: "127.0.0.1", forwardedFor: CLIENT, client: "127.0.0.1" },
  { name: "a listed proxy", trust: ["127.0.0.1"], peer: "127.0.0.1", forwardedFor: CLIENT, client: CLIENT },
  {
    name: "a client reaching the server directly",
    trust: ["127.0.0.1"],
    peer: DIRECT,
    forwardedFor: CLIENT,
    client: DIRECT,
  },
  { name: "a proxy in a listed range", trust: ["10.0.0.0/8"], peer: "10.1.2.3", forwardedFor: CLIENT, client: CLIENT },
  {
    name: "what a client wrote before the proxy's entry",
    trust: ["10.0.0.0/8"],
    peer: "10.1.2.3",
    forwardedFor: `192.0.2.1, ${CLIENT}`,
    client: CLIENT,
  },
  {
    name: "two listed proxies in a chain",
    trust: ["10.0.0.0/8", "192.168.1.5"],
    peer: "10.1.2.3",
    forwardedFor: `192.0.2.1, ${CLIENT}, 192.168.1.5`,
    client: CLIENT,
  },
  {
    name: "an inner hop that is not listed: it is the client",
    trust: ["10.0.0.0/8"],
    peer: "10.1.2.3",
    forwardedFor: `${CLIENT}, 192.168.1.5`,
    client: "192.168.1.5",
  },
  {
    name: "an IPv6 proxy in a listed range",
    trust: ["2001:db8::/32"],
    peer: "2001:db8::1",
    forwardedFor: "2001:db9::7",
    client: "2001:db9::7",
  },
  {
    name: "an IPv6 client reaching the server directly",
    trust: ["2001:db8::/32"],
    peer: "2001:dead::1",
    forwardedFor: CLIENT,
    client: "2001:dead::1",
  },
  {
    name: "a listed IPv4 proxy seen on an IPv6 socket",
    trust: ["127.0.0.1"],
    peer: "::ffff:127.0.0.1",
    forwardedFor: CLIENT,
    client: CLIENT,
  },
];

describe("the client address behind --trust-proxy", () => {
  it.each(SCENARIOS)(
    "$name: $peer sending '$forwardedFor' is $client",
    async ({ trust, peer, forwardedFor, client }) => {
      const target = await server({
        ...(trust && { trustProxy: trust }),
        loginRateLimit: { max: 1, timeWindowMs: 60_000 },
      });
      const login = await target.app.inject({
        method: "POST",
        url: "/auth/login",
        remoteAddress: peer,
        headers: { "x-forwarded-for": forwardedFor },
        payload: { userName: ADMIN_USER, password: ADMIN_PASSWORD },
      });
      expect(login.statusCode, login.body).toBe(200);
      const auth = bearer((login.json() as { token: string }).token);

      // the session records it
      const sessions = await target.app.inject({ method: "GET", url: "/auth/sessions", headers: auth });
      expect((sessions.json() as { sessions: { clientIp?: string }[] }).sessions).toEqual([
        expect.objectContaining({ clientIp: client }),
      ]);
      // the audit trail records it
      const audit = await target.app.inject({
        method: "GET",
        url: `/audit?${new URLSearchParams({ filter: 'action eq "login"' })}`,
        headers: auth,
      });
      expect((audit.json() as { data: { clientIp?: string }[] }).data).toEqual([
        expect.objectContaining({ clientIp: client }),
      ]);
      // the rate limiter counted it: the budget of 1 is spent for that address, asked directly
      const again = await target.app.inject({
        method: "POST",
        url: "/auth/login",
        remoteAddress: client,
        payload: { userName: ADMIN_USER, password: ADMIN_PASSWORD },
      });
      problemOf(again, 429, "rate_limited");
    },
  );
});

describe("a client rotating X-Forwarded-For", () => {
  const MAX = 5;
  const ATTEMPTS = 10;
  const rotating = (i: number) => `198.51.100.${i}`;
  const scenarios = [
    { name: "from an unlisted peer: one budget", trust: ["10.0.0.0/8"], peer: DIRECT, passing: MAX },
    { name: "without --trust-proxy: one budget", trust: undefined, peer: DIRECT, passing: MAX },
    {
      name: "through a listed proxy: the clients it tells apart",
      trust: ["10.0.0.0/8"],
      peer: "10.1.2.3",
      passing: 10,
    },
  ];

  it.each(scenarios)("$name", async ({ trust, peer, passing }) => {
    const target = await server({
      ...(trust && { trustProxy: trust }),
      loginRateLimit: { max: MAX, timeWindowMs: 60_000 },
    });
    const statuses: number[] = [];
    for (let i = 1; i <= ATTEMPTS; i++) {
      const response = await target.app.inject({
        method: "POST",
        url: "/auth/login",
        remoteAddress: peer,
        headers: { "x-forwarded-for": rotating(i) },
        payload: { userName: `nobody-${i}`, password: "wrong password for nobody 1" },
      });
      statuses.push(response.statusCode);
    }
    expect(statuses).toEqual([
      ...Array.from({ length: passing }, () => 401),
      ...Array.from({ length: ATTEMPTS - passing }, () => 429),
    ]);
  });
});
