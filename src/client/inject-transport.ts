import {
  attemptHeaders,
  flattenHeaders,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from "./transport.js";

/** Anything with Fastify's inject(): the client need not know it is talking to Fastify. */
export interface Injectable {
  inject(options: {
    method: string;
    url: string;
    headers: Record<string, string>;
    payload?: string;
  }): Promise<{ statusCode: number; headers: Record<string, string | string[] | number | undefined>; body: string }>;
  close(): Promise<unknown>;
}

/** Sends every call through the full HTTP pipeline of an in-process app (the embedded mode). */
export class InjectTransport implements Transport {
  constructor(
    private readonly app: Injectable,
    readonly description: string,
  ) {}

  async send(request: TransportRequest): Promise<TransportResponse> {
    const response = await this.app.inject({
      method: request.method,
      url: request.path,
      headers: attemptHeaders(request),
      ...(request.body !== undefined && { payload: request.body }),
    });
    return { status: response.statusCode, headers: flattenHeaders(response.headers), body: response.body };
  }

  async close(): Promise<void> {
    await this.app.close();
  }
}
