import { setTimeout as sleep } from "node:timers/promises";
import type { Dispatcher } from "undici";
// undici's index loads every dispatcher, fetch, WebSocket and the mocks (1 MB parsed at each start);
// a CLI call needs a Pool and request() only
import undiciRequest from "undici/lib/api/api-request.js";
import Pool from "undici/lib/dispatcher/pool.js";
import { setV8Flags } from "../v8-flags.js";
import { NetworkError } from "./errors.js";
import {
  attemptHeaders,
  flattenHeaders,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from "./transport.js";

// undici parses HTTP with llhttp compiled to WebAssembly. By default V8 compiles it twice: a quick
// baseline (Liftoff) to start with, then every function again with its optimising compiler
// (TurboFan) on background threads, which took a third of the instructions of a whole
// `events list` and competes for the cores the command runs on. A CLI parses a few responses and
// exits, so the baseline code is all it needs. The flag is read when a module is compiled (on the
// first connection), and this process compiles no other WebAssembly.
setV8Flags("--liftoff-only", "--no-liftoff-only --wasm-tier-up --wasm-dynamic-tiering");

const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);
const RETRY_STATUS = new Set([429, 502, 503, 504]);
const RETRY_ERRORS = new Set(["ECONNRESET", "UND_ERR_SOCKET", "EPIPE"]);
const MAX_RETRIES = 3;
const MAX_RETRY_WAIT_MS = 30_000;

export interface HttpTransportOptions {
  timeoutMs?: number;
  /** waits between retries; tests shorten it */
  backoffMs?: number;
  onRetry?: (reason: string, attempt: number, waitMs: number) => void;
}

/** Seconds or an HTTP date, as RFC 9110 allows. */
export function retryAfterMs(header: string | undefined, fallbackMs: number): number {
  if (!header) return fallbackMs;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Math.min(Math.max(ms, 0), MAX_RETRY_WAIT_MS);
}

/** Talks to a remote server with undici; retries idempotent calls on 429/502/503/504 and resets. */
export class HttpTransport implements Transport {
  private readonly pool: Dispatcher;
  private readonly basePath: string;
  readonly description: string;

  constructor(
    baseUrl: string,
    private readonly options: HttpTransportOptions = {},
  ) {
    const url = new URL(baseUrl);
    this.basePath = url.pathname.replace(/\/+$/, "");
    this.description = `${url.origin}${this.basePath}`;
    const timeout = options.timeoutMs ?? 30_000;
    this.pool = new Pool(url.origin, {
      connections: 4,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      connectTimeout: 10_000,
    });
  }

  async send(request: TransportRequest): Promise<TransportResponse> {
    const retryable = IDEMPOTENT.has(request.method);
    const backoff = this.options.backoffMs ?? 500;
    for (let attempt = 0; ; attempt++) {
      let response: TransportResponse;
      try {
        response = await this.once(request);
      } catch (error) {
        const code = (error as { code?: string }).code ?? "";
        if (retryable && RETRY_ERRORS.has(code) && attempt < MAX_RETRIES) {
          const wait = backoff * 2 ** attempt;
          this.options.onRetry?.(code, attempt + 1, wait);
          await sleep(wait);
          continue;
        }
        // a write whose connection broke after it was sent may have been applied: say so, since
        // a blind retry could apply it twice
        const maybeApplied = !retryable && !NEVER_SENT.has(code);
        const message = describeNetworkError(code, this.description);
        throw new NetworkError(
          maybeApplied
            ? `${message} The ${request.method} may have been applied before the connection broke: check before you retry it.`
            : message,
          this.description,
          error,
        );
      }
      if (retryable && RETRY_STATUS.has(response.status) && attempt < MAX_RETRIES) {
        const wait = retryAfterMs(response.headers["retry-after"], backoff * 2 ** attempt);
        this.options.onRetry?.(`HTTP ${response.status}`, attempt + 1, wait);
        await sleep(wait);
        continue;
      }
      return response;
    }
  }

  private async once(request: TransportRequest): Promise<TransportResponse> {
    const response = await undiciRequest.call(this.pool, {
      method: request.method as "GET",
      path: `${this.basePath}${request.path}`,
      headers: attemptHeaders(request),
      body: request.body,
    });
    return {
      status: response.statusCode,
      headers: flattenHeaders(response.headers),
      body: await response.body.text(),
    };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/** Failures before anything reached the server. */
const NEVER_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"]);

function describeNetworkError(code: string, target: string): string {
  switch (code) {
    case "ECONNREFUSED":
      return `Cannot connect to ${target}: connection refused (is the server running?).`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `Cannot resolve the host of ${target}.`;
    case "UND_ERR_CONNECT_TIMEOUT":
      return `Timed out connecting to ${target}.`;
    case "UND_ERR_HEADERS_TIMEOUT":
    case "UND_ERR_BODY_TIMEOUT":
      return `${target} did not answer in time.`;
    default:
      return `The connection to ${target} failed${code ? ` (${code})` : ""}.`;
  }
}
