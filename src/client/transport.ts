/** One HTTP exchange, independent of how it travels (a socket, or in-process inject). */
export interface TransportRequest {
  method: string;
  /** path with its query string, e.g. `/api/crm/v1/events?page=2` */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /**
   * The `Authorization` value, made again for every attempt: an OAuth 1.0a signature carries a
   * nonce and a timestamp the server accepts once, so a retry must be signed afresh.
   */
  authorize?: () => string;
}

/** The headers of one attempt: those of the request, with a fresh `Authorization` when it is signed. */
export function attemptHeaders(request: TransportRequest): Record<string, string> {
  return request.authorize ? { ...request.headers, authorization: request.authorize() } : request.headers;
}

export interface TransportResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Transport {
  /** a short description for messages: `embedded (~/.local/share/bizctl)` or the server URL */
  readonly description: string;
  send(request: TransportRequest): Promise<TransportResponse>;
  close(): Promise<void>;
}

export function flattenHeaders(
  headers: Record<string, string | string[] | number | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return out;
}
