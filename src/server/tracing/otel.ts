import type { IncomingMessage } from "node:http";
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { Tracing } from "./tracing.js";

/**
 * OpenTelemetry's SDK, set up by hand rather than by its auto-instrumentation: spans for the
 * requests, the statements and transactions, and the SMTP sends, exported over OTLP/HTTP to
 * OTEL_EXPORTER_OTLP_ENDPOINT (the exporter reads it, and OTEL_EXPORTER_OTLP_HEADERS and the
 * batch processor's OTEL_BSP_* variables). Attributes follow the semantic conventions; none holds
 * a path as sent, a query string, a body or a credential.
 */
export function startTracing(version: string): Tracing {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      "service.name": process.env.OTEL_SERVICE_NAME ?? "bizctl",
      "service.version": version,
    }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer("bizctl", version);
  const requests = new WeakMap<IncomingMessage, { span: Span; context: Context }>();

  /**
   * A span of an operation that has just ended, `seconds` long, under the active span: a
   * statement outside any request or send (start-up, the mail loop's polling, the pruning) makes
   * none, or every few seconds would start a trace of one statement.
   */
  const ended = (name: string, seconds: number, attributes: Record<string, string>, failed = false) => {
    if (!trace.getSpan(context.active())) return;
    const end = performance.timeOrigin + performance.now();
    const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, startTime: end - seconds * 1000, attributes });
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(end);
  };

  return {
    startRequest(raw, requestId) {
      const parent = propagation.extract(ROOT_CONTEXT, raw.headers);
      const span = tracer.startSpan(
        raw.method ?? "HTTP",
        {
          kind: SpanKind.SERVER,
          attributes: { "http.request.method": raw.method ?? "_OTHER", "bizctl.request.id": requestId },
        },
        parent,
      );
      requests.set(raw, { span, context: trace.setSpan(parent, span) });
    },
    traceId: (raw) => requests.get(raw)?.span.spanContext().traceId,
    enterRequest(raw, next) {
      const request = requests.get(raw);
      if (request) context.with(request.context, next);
      else next();
    },
    endRequest(raw, route, status) {
      const request = requests.get(raw);
      if (!request) return;
      requests.delete(raw);
      const { span } = request;
      if (route) {
        span.updateName(`${raw.method} ${route}`);
        span.setAttribute("http.route", route);
      }
      span.setAttribute("http.response.status_code", status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
    observeStore(observer, dbSystem) {
      return {
        query(operation, seconds) {
          observer.query(operation, seconds);
          ended(operation, seconds, { "db.system.name": dbSystem, "db.operation.name": operation });
        },
        transaction(outcome, seconds) {
          observer.transaction(outcome, seconds);
          ended(
            "transaction",
            seconds,
            { "db.system.name": dbSystem, "bizctl.outcome": outcome },
            outcome === "rollback",
          );
        },
        groupCommit: (writes) => observer.groupCommit(writes),
      };
    },
    async smtpSend(send) {
      return tracer.startActiveSpan("smtp send", { kind: SpanKind.CLIENT }, async (span) => {
        try {
          return await send();
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
          throw error;
        } finally {
          span.end();
        }
      });
    },
    async shutdown() {
      await provider.shutdown();
      contextManager.disable();
    },
  };
}
