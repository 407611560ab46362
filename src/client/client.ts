import type { ProblemDocument } from "../contract/errors.js";
import {
  type BodyOf,
  buildPath,
  type ParamsOf,
  type QueryOf,
  type ResponseOf,
  type RouteEntry,
} from "../contract/route.js";
import { ApiError } from "./errors.js";
import type { Transport, TransportResponse } from "./transport.js";

export interface CallInput<E extends RouteEntry> {
  params?: ParamsOf<E>;
  query?: QueryOf<E>;
  body?: BodyOf<E>;
  ifMatch?: string;
  /** further request headers; an `authorization` here replaces the client's credential */
  headers?: Record<string, string>;
  /** makes the `Authorization` of each attempt, retries included (OAuth-signed calls: a fresh nonce each) */
  authorize?: () => string;
}

export interface CallResult<E extends RouteEntry> {
  data: ResponseOf<E>;
  status: number;
  etag?: string;
  headers: Record<string, string>;
}

export interface ClientOptions {
  /** the credential for `Authorization`, read on each call */
  authorization?: () => string | undefined;
  /** called with one line per request and response (`--verbose`); credentials are already masked */
  trace?: (line: string) => void;
}

function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== "") params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

function parseBody(response: TransportResponse): unknown {
  if (!response.body) return undefined;
  const type = response.headers["content-type"] ?? "";
  if (!/json/.test(type)) return response.body;
  try {
    return JSON.parse(response.body);
  } catch {
    return response.body;
  }
}

/** The error of a non-2xx answer, with its Retry-After when it has one. */
export function apiErrorOf(response: TransportResponse, body: unknown): ApiError {
  const header = response.headers["retry-after"];
  const retryAfter = header === undefined ? Number.NaN : Number(header);
  return new ApiError(response.status, problemOf(response, body), Number.isFinite(retryAfter) ? retryAfter : undefined);
}

/**
 * The problem document of a failed call (a SCIM endpoint's error body alike), or one made up
 * from its status when the body is not one.
 */
export function problemOf(response: TransportResponse, body: unknown): ProblemDocument {
  if (body && typeof body === "object" && "code" in body) {
    const problem = body as ProblemDocument;
    // a SCIM error (RFC 7644 section 3.12) is the same document with its status written as a string
    return typeof problem.status === "number" ? problem : { ...problem, status: response.status };
  }
  return {
    type: "about:blank",
    title: `HTTP ${response.status}`,
    status: response.status,
    detail: typeof body === "string" && body ? body.slice(0, 200) : `The server answered HTTP ${response.status}.`,
    code: response.status >= 500 ? "internal_error" : "http_error",
  };
}

declare const BIZCTL_VERSION: string;
/** Names the CLI in the server's session list (`auth sessions`), so a person can tell sessions apart. */
const USER_AGENT = `bizctl/${typeof BIZCTL_VERSION === "string" ? BIZCTL_VERSION : "0.0.0-dev"}`;

/** Calls contract operations over any transport; a non-2xx answer throws ApiError. */
export class ApiClient {
  constructor(
    readonly transport: Transport,
    private readonly options: ClientOptions = {},
  ) {}

  async call<E extends RouteEntry>(entry: E, input: CallInput<E> = {}): Promise<CallResult<E>> {
    const path =
      buildPath(entry.path, input.params as Record<string, string> | undefined) +
      queryString(input.query as Record<string, unknown> | undefined);
    const response = await this.request(
      entry.method,
      path,
      input.body,
      { ...(input.ifMatch && { "if-match": input.ifMatch }), ...input.headers },
      input.authorize,
    );
    const body = parseBody(response);
    if (response.status >= 400) throw apiErrorOf(response, body);
    return {
      data: body as ResponseOf<E>,
      status: response.status,
      etag: response.headers.etag,
      headers: response.headers,
    };
  }

  /** A raw call (`bizctl api`): returns whatever the server answered, errors included. */
  async raw(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    authorize?: () => string,
  ): Promise<TransportResponse & { data: unknown }> {
    const response = await this.request(method.toUpperCase(), path, body, headers, authorize);
    return { ...response, data: parseBody(response) };
  }

  private async request(
    method: string,
    path: string,
    body: unknown,
    extra: Record<string, string>,
    authorize?: () => string,
  ) {
    const headers: Record<string, string> = { accept: "application/json", "user-agent": USER_AGENT, ...extra };
    // a signed call's Authorization is made by the transport for each attempt
    const authorization = authorize ? undefined : (extra.authorization ?? this.options.authorization?.());
    if (authorization) headers.authorization = authorization;
    const scheme = authorize ? "OAuth" : authorization?.split(" ")[0];
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === "string" ? body : JSON.stringify(body);
      headers["content-type"] = "application/json";
    }
    const trace = this.options.trace;
    const started = performance.now();
    trace?.(`> ${method} ${path}${scheme ? `  (authorization: ${scheme} ***)` : ""}`);
    const response = await this.transport.send({
      method,
      path,
      headers,
      body: payload,
      ...(authorize && { authorize }),
    });
    trace?.(
      `< ${response.status} ${method} ${path} in ${Math.round(performance.now() - started)} ms` +
        `${response.headers["x-request-id"] ? `  (request id ${response.headers["x-request-id"]})` : ""}`,
    );
    return response;
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
