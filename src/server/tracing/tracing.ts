import type { IncomingMessage } from "node:http";
import type { StoreObserver } from "../metrics/metrics.js";

/**
 * What the app asks of OpenTelemetry's tracing (spec 1.8), as plain calls: only a server started
 * with OTEL_EXPORTER_OTLP_ENDPOINT set has one (tracing/otel.ts), and without it nothing of
 * OpenTelemetry is loaded.
 */
export interface Tracing {
  /**
   * Starts the request's span, a child of the caller's W3C `traceparent` when it sent one, and
   * answers its trace id: the request id of the logs, the problem documents and `x-request-id`.
   */
  startRequest(raw: IncomingMessage): string;
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
