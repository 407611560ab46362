/** One HTTP exchange, independent of how it travels (a socket, or in-process inject). */
export interface TransportRequest {
  method: string;
  /** path with its query string, e.g. `/api/crm/v1/events?page=2` */
  path: string;
  headers: Record<string, string>;
  body?: string;
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
