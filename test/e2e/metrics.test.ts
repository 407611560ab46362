/**
 * `server start --metrics-port` (spec 1.8): the real listener scraped over HTTP and its text
 * parsed by the Prometheus project's Python client; the counts held against the traffic the test
 * sends; the series flat when 200 distinct unknown paths are requested; no secret in a scrape. On
 * SQLite and PostgreSQL, with one process and with `--workers 2`, whose primary adds up its
 * workers.
 */
import { describe, expect, it } from "vitest";
import { allRoutes } from "../../src/contract/index.js";
import {
  ADMIN,
  apiToken,
  httpJson,
  logLinesOf,
  PASSWORD,
  type RunningServer,
  type Storage,
  show,
  useServer,
} from "../helpers/cli.js";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";
import { parseExposition, type Sample, sampleValue } from "../helpers/prometheus.js";

const postgres = async (): Promise<Storage> => {
  const database = await createTestDatabase();
  return { args: ["--database", database.url], env: { BIZCTL_SECRET_KEY: TEST_SECRET_KEY }, drop: database.drop };
};

const SETUPS: { name: string; system: string; storage?: () => Promise<Storage>; workers?: number }[] = [
  { name: "SQLite, one process", system: "sqlite" },
  { name: "PostgreSQL, one process", system: "postgresql", storage: postgres },
  { name: "SQLite, --workers 2", system: "sqlite", workers: 2 },
  { name: "PostgreSQL, --workers 2", system: "postgresql", storage: postgres, workers: 2 },
];

const TEMPLATES = new Set(allRoutes.map((route) => route.path));
const REQUESTS = "http_server_request_duration_seconds_count";

/** Where the server said its metrics listen (the primary says it for its workers). */
function metricsUrl(server: RunningServer): string {
  const line = logLinesOf<{ msg?: string; metrics?: string }>(server).find((l) =>
    l.msg?.startsWith("metrics listening"),
  );
  if (!line?.metrics) throw new Error(`no "metrics listening" line in the server's log:\n${server.logs()}`);
  return line.metrics;
}

async function scrape(server: RunningServer): Promise<{ text: string; samples: Sample[] }> {
  const response = await fetch(metricsUrl(server));
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  return { text, samples: parseExposition(text) };
}

describe.each(SETUPS)("metrics: $name", ({ system, storage, workers }) => {
  const s = useServer({
    login: false,
    ...(storage && { storage: () => storage() }),
    serverArgs: ["--metrics-port", "0", ...(workers ? ["--workers", String(workers)] : [])],
  });

  it("counts the requests and logins sent, by route template and outcome, with no secret in the scrape", async () => {
    const before = (await scrape(s.server)).samples;
    for (let i = 0; i < 6; i++) expect((await httpJson(s.server, "GET", "/health")).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const refused = await httpJson(s.server, "POST", "/auth/login", { userName: ADMIN, password: "not it at all 1" });
      expect(refused.status).toBe(401);
    }
    const token = await apiToken(s.server);
    const event = await httpJson(s.server, "GET", "/api/crm/v1/events/NO-SUCH-CODE", undefined, {
      authorization: `Bearer ${token}`,
    });
    expect(event.status).toBe(404);
    const { text, samples } = await scrape(s.server);

    const delta = (name: string, labels: Record<string, string>) =>
      sampleValue(samples, name, labels) - sampleValue(before, name, labels);
    expect(delta(REQUESTS, { http_route: "/health", http_response_status_code: "200" })).toBe(6);
    expect(delta(REQUESTS, { http_route: "/auth/login", http_response_status_code: "401" })).toBe(2);
    expect(
      delta(REQUESTS, {
        http_request_method: "GET",
        http_route: "/api/crm/v1/events/:code",
        http_response_status_code: "404",
      }),
    ).toBe(1);
    expect(delta("bizctl_logins_total", { outcome: "invalid_credentials" })).toBe(2);
    expect(delta("bizctl_logins_total", { outcome: "success" })).toBe(1);
    expect(sampleValue(samples, "bizctl_sessions_open")).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, "bizctl_mail_queue_depth")).toBeGreaterThanOrEqual(0);
    expect(
      delta("db_client_operation_duration_seconds_count", { db_system_name: system, db_operation_name: "select" }),
    ).toBeGreaterThan(0);
    expect(samples.some((sample) => sample.name === "process_cpu_user_seconds_total")).toBe(true);
    if (system === "postgresql") {
      expect(samples.some((sample) => sample.name === "db_client_connection_count")).toBe(true);
    }
    // labels are templates and codes: never a token, a password, a user name or a path as sent
    for (const secret of [token, PASSWORD, "not it at all 1", "NO-SUCH-CODE"]) expect(text).not.toContain(secret);
  });

  it("keeps the series flat when 200 distinct unknown paths are requested", async () => {
    const series = (samples: Sample[]) => samples.filter((sample) => sample.name === REQUESTS).length;
    await httpJson(s.server, "GET", "/no-such-path-warm-up");
    const before = (await scrape(s.server)).samples;
    for (let i = 0; i < 200; i++) {
      expect((await httpJson(s.server, "GET", `/no-such-path-${i}/${crypto.randomUUID()}`)).status).toBe(404);
    }
    const { text, samples } = await scrape(s.server);
    expect(series(samples)).toBe(series(before));
    expect(sampleValue(samples, REQUESTS, { http_route: "", http_response_status_code: "404" })).toBe(
      sampleValue(before, REQUESTS, { http_route: "", http_response_status_code: "404" }) + 200,
    );
    expect(text).not.toContain("no-such-path");
    const routes = new Set(
      samples.filter((sample) => sample.name === REQUESTS).map((sample) => sample.labels.http_route),
    );
    for (const route of routes) if (route) expect(TEMPLATES, route).toContain(route);
  });

  it("serves /metrics on its own listener only", async () => {
    const metrics = new URL(metricsUrl(s.server));
    expect(metrics.hostname).toBe("127.0.0.1");
    expect(metrics.port).not.toBe(new URL(s.server.url).port);
    expect((await fetch(new URL("/other", metrics))).status).toBe(404);
    expect((await httpJson(s.server, "GET", "/metrics")).status).toBe(404);
  });
});

describe("--metrics-port refused", () => {
  const s = useServer({ login: false });

  it.each([
    {
      name: "the API's port",
      args: (port: string) => ["--port", port, "--metrics-port", port],
      exit: 2,
      message: /must differ from --port/,
    },
    {
      name: "a port in use",
      args: (port: string) => ["--port", "0", "--metrics-port", port],
      exit: 1,
      message: /choose another --metrics-port/,
    },
  ])("on $name: exit $exit, and nothing serves", async ({ args, exit, message }) => {
    const port = new URL(s.server.url).port;
    const result = await s.run(["server", "start", "--data-dir", s.sandbox.dataDir, ...args(port)], {
      timeoutMs: 30_000,
    });
    expect(result.exitCode, show(result)).toBe(exit);
    expect(result.stderr).toMatch(message);
  });
});
