import { setImmediate as afterPendingCallbacks } from "node:timers/promises";
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
    // Each answer leaves callbacks in the event loop's check phase (the stream ends of the fake
    // socket), and they hold the answer. In-process, on SQLite, nothing else needs the event loop:
    // a command that sends request after request (an export) never reached that phase, and held
    // every answer until it ended (221 MB of buffers at 300,000 events). Let them run.
    await afterPendingCallbacks();
    return { status: response.statusCode, headers: flattenHeaders(response.headers), body: response.body };
  }

  async close(): Promise<void> {
    await this.app.close();
  }
}
