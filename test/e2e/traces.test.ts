/**
 * `server start` with OTEL_EXPORTER_OTLP_ENDPOINT (spec 1.8): the spans a real server exports over
 * OTLP/HTTP, received by a small OTLP receiver in this test that keeps what it is sent. The
 * request span continues the caller's W3C trace context, its statements are its children, an SMTP
 * send has a span of its own, and the request id of the answer, the problem document and the log
 * is the server's own, the caller's trace id logged beside it. On SQLite and PostgreSQL, and with `--workers 2`, each worker exporting its own.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ADMIN, apiToken, httpJson, logLinesOf, PASSWORD, useServer } from "../helpers/cli.js";
import { type SmtpSink, startSmtpSink } from "../helpers/mail.js";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}

const SPAN_KIND = { server: 2, client: 3 };

/** An OTLP/HTTP receiver (JSON, as the exporter sends it): the spans it was sent, and the raw bodies. */
async function otlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      bodies.push(body);
      if (request.url === "/v1/traces") {
        const parsed = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: ReceivedSpan[] }[] }[] };
        for (const resource of parsed.resourceSpans)
          for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    /** the spans received, once `match` finds one among them (the exporter sends in batches) */
    async waitFor(match: (span: ReceivedSpan) => boolean, timeoutMs = 10_000): Promise<ReceivedSpan> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = spans.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no such span among ${spans.map((s) => s.name).join(", ")}`);
        await new Promise((next) => setTimeout(next, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const attribute = (span: ReceivedSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

const SETUPS = [
  { name: "SQLite", system: "sqlite", workers: 1 },
  { name: "PostgreSQL", system: "postgresql", workers: 1 },
  { name: "SQLite, --workers 2", system: "sqlite", workers: 2 },
  { name: "PostgreSQL, --workers 2", system: "postgresql", workers: 2 },
];

describe.each(SETUPS)("traces over OTLP/HTTP: $name", ({ system, workers }) => {
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
  let sink: SmtpSink;
  afterAll(async () => {
    await receiver?.close();
    await sink?.close();
  });
  const s = useServer({
    login: false,
    initArgs: ["--admin-email", "admin@example.com"],
    storage: async () => {
      receiver = await otlpReceiver();
      sink = await startSmtpSink();
      const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" };
      if (system === "sqlite") return { args: [], env: tracing, drop: async () => {} };
      const database = await createTestDatabase();
      return {
        args: ["--database", database.url],
        env: { ...tracing, BIZCTL_SECRET_KEY: TEST_SECRET_KEY },
        drop: database.drop,
      };
    },
    serverArgs: () => ["--smtp-url", sink.url, "--workers", String(workers)],
  });

  it("continues the caller's trace: the request span, its statements as children, a request id of the server's own", async () => {
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const parentSpanId = "b7ad6b7169203331";
    const token = await apiToken(s.server);
    const ask = () =>
      httpJson(s.server, "GET", "/api/crm/v1/events/NO-SUCH-CODE", undefined, {
        authorization: `Bearer ${token}`,
        traceparent: `00-${traceId}-${parentSpanId}-01`,
      });
    // one traceparent on two requests: two request ids, neither of them the caller's trace id
    const answers = [await ask(), await ask()];
    const ids: string[] = [];
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      const id = answer.headers.get("x-request-id")!;
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(((await answer.json()) as { requestId: string }).requestId).toBe(id);
      ids.push(id);
    }
    expect(new Set(ids).size).toBe(2);
    expect(ids).not.toContain(traceId);

    const request = await receiver.waitFor((span) => span.traceId === traceId && span.kind === SPAN_KIND.server);
    expect(request).toMatchObject({ parentSpanId, name: "GET /api/crm/v1/events/:code" });
    expect(ids).toContain(attribute(request, "bizctl.request.id"));
    expect(attribute(request, "http.route")).toBe("/api/crm/v1/events/:code");
    expect(attribute(request, "http.response.status_code")).toBe(404);
    const statement = await receiver.waitFor((span) => span.parentSpanId === request.spanId);
    expect(statement).toMatchObject({ traceId, kind: SPAN_KIND.client });
    expect(attribute(statement, "db.system.name")).toBe(system);
    expect(attribute(statement, "db.operation.name")).toBe("select");
    // the log has the request id, and the caller's trace id beside it
    const logged = await vi.waitFor(() => {
      const lines = logLinesOf<{ reqId?: string; traceId?: string; msg?: string }>(s.server).filter((line) =>
        ids.includes(line.reqId ?? ""),
      );
      expect(lines.filter((line) => line.msg === "request completed")).toHaveLength(2);
      return lines;
    });
    for (const line of logged) expect(line.traceId).toBe(traceId);
  });

  it("starts a trace of its own without a traceparent, and spans an SMTP send", async () => {
    const answer = await httpJson(s.server, "POST", "/renewPassword", { userName: ADMIN });
    expect(answer.status).toBe(202);
    const requestId = answer.headers.get("x-request-id")!;
    const span = await receiver.waitFor((span) => attribute(span, "bizctl.request.id") === requestId);
    expect(span.name).toBe("POST /renewPassword");
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.traceId).not.toMatch(/^0+$/);
    await sink.waitFor((mail) => mail.rcptTo.includes("admin@example.com"));
    await receiver.waitFor((span) => span.name === "smtp send" && span.kind === SPAN_KIND.client);
  });

  it("sends no token, password, path as sent or mail address in a span", async () => {
    await receiver.waitFor((span) => span.name === "smtp send");
    const sent = receiver.bodies.join("\n");
    for (const secret of [PASSWORD, "NO-SUCH-CODE", "admin@example.com", "Bearer"]) expect(sent).not.toContain(secret);
  });
});
