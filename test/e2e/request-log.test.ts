import { describe, expect, it } from "vitest";
import { apiToken, bizctl, logLinesOf, show, startServer, useSession } from "../helpers/cli.js";

/**
 * `server start` writes its log asynchronously (the request line must not block the event loop):
 * a SIGTERM right after the last answer still finds every request line in stdout.
 */

interface RequestLine {
  msg?: string;
  req?: { url?: string; id?: string; remoteAddress?: string };
  res?: { statusCode?: number };
}

describe("server start: the request log under SIGTERM", () => {
  const s = useSession("embedded", { login: false });

  it("has one line per request, none lost, when stopped right after the last answer", async () => {
    const server = await startServer(s.sandbox.dataDir, { env: s.sandbox.env });
    const token = await apiToken(server);
    const N = 400;
    // in concurrent batches, so that lines pile up in the buffer while a write is in flight
    for (let start = 0; start < N; start += 50) {
      const statuses = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const n = start + i;
          const response =
            n % 2 === 0
              ? await fetch(`${server.url}/health?n=${n}`)
              : await fetch(`${server.url}/auth/isLogged?n=${n}`, { headers: { authorization: `Bearer ${token}` } });
          await response.arrayBuffer();
          return response.status;
        }),
      );
      expect(statuses.every((status) => status === 200)).toBe(true);
    }
    expect(await server.stop()).toBe(0);

    const lines = logLinesOf<RequestLine>(server).filter((line) => line.msg === "request completed");
    const numbered = lines
      .map((line) => /[?&]n=(\d+)/.exec(line.req?.url ?? "")?.[1])
      .filter((n) => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    expect(numbered).toEqual(Array.from({ length: N }, (_, n) => n));
    expect(lines.every((line) => line.res?.statusCode === 200 && typeof line.req?.id === "string")).toBe(true);
    // the login line is there too, and no line carries the token
    expect(lines).toHaveLength(N + 1);
    expect(server.logs()).not.toContain(token);
    expect(server.logs()).toContain('"msg":"shutting down"');
  }, 60_000);

  // BIZCTL_TRUST_PROXY lists the proxies; the old off values still trust no one
  it.each([
    { value: "false", logged: "127.0.0.1" },
    { value: "0", logged: "127.0.0.1" },
    { value: "", logged: "127.0.0.1" },
    { value: "10.0.0.0/8", logged: "127.0.0.1" },
    { value: "127.0.0.1", logged: "203.0.113.7" },
    { value: "::1, 127.0.0.0/8", logged: "203.0.113.7" },
  ])(
    "BIZCTL_TRUST_PROXY=$value logs the client as $logged",
    async ({ value, logged }) => {
      const server = await startServer(s.sandbox.dataDir, { env: { ...s.sandbox.env, BIZCTL_TRUST_PROXY: value } });
      const response = await fetch(`${server.url}/health?probe`, { headers: { "x-forwarded-for": "203.0.113.7" } });
      expect(response.status).toBe(200);
      expect(await server.stop()).toBe(0);
      const line = logLinesOf<RequestLine>(server).find(
        (entry) => entry.msg === "request completed" && entry.req?.url === "/health?probe",
      );
      expect(line?.req?.remoteAddress, server.logs()).toBe(logged);
    },
    60_000,
  );

  it("refuses a BIZCTL_TRUST_PROXY that is not a list of addresses (exit 2)", async () => {
    const started = await bizctl(["server", "start", "--port", "0", "--data-dir", s.sandbox.dataDir], {
      env: { ...s.sandbox.env, BIZCTL_TRUST_PROXY: "maybe" },
    });
    expect(started.exitCode, show(started)).toBe(2);
    expect(started.stderr).toContain("'maybe' is not an IP address or CIDR range");
  }, 60_000);
});
