import type { IncomingMessage } from "node:http";
import type { StoreObserver } from "../metrics/metrics.js";

/**
 * What the app asks of OpenTelemetry's tracing (spec 1.8), as plain calls: only a server started
 * with OTEL_EXPORTER_OTLP_ENDPOINT set has one (tracing/otel.ts), and without it nothing of
 * OpenTelemetry is loaded.
 */
export interface Tracing {
  /**
   * Starts the request's span, a child of the caller's W3C `traceparent` when it sent one, with
   * the server's own request id as an attribute. The caller picks the trace id, so it is logged
   * beside the request id, never as it (spec 1.8).
   */
  startRequest(raw: IncomingMessage, requestId: string): void;
  /** the trace id of the request's span, while it runs */
  traceId(raw: IncomingMessage): string | undefined;
  /** runs `next` (the rest of the request) with the request's span as the active one */
  enterRequest(raw: IncomingMessage, next: () => void): void;
  /** ends the request's span: named by its route's template, with its status */
  endRequest(raw: IncomingMessage, route: string, status: number): void;
  /** `observer`, and a span for each statement and transaction, children of the active span */
  observeStore(observer: StoreObserver, dbSystem: string): StoreObserver;
  /** `send` in a span of its own (the sender loop runs outside any request) */
  smtpSend<T>(send: () => Promise<T>): Promise<T>;
  /** sends what is buffered; the server's close awaits it */
  shutdown(): Promise<void>;
}
