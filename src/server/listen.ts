import { buildApp } from "./app.js";
import type { ServerOptions } from "./options.js";

export interface ListenOptions extends ServerOptions {
  host: string;
  port: number;
}

/** `server start`: listen, and close gracefully on SIGINT/SIGTERM (in-flight requests finish). */
export async function startServer(options: ListenOptions): Promise<{ url: string; closed: Promise<void> }> {
  const app = await buildApp({ mailSenderLoop: true, ...options });
  const url = await app.listen({ host: options.host, port: options.port });
  app.useListenUrl(url);
  app.log.info({ mail: app.services.mailer.describe, links: app.services.linkBase() }, "mail and links");
  const rateLimits = app.rateLimits;
  if (rateLimits.shared) {
    app.log.info(
      { rateLimits },
      "per-client rate limits and the back-off of unknown names are shared with every instance through Redis",
    );
  } else if (rateLimits.store === "redis") {
    app.log.info(
      { rateLimits },
      "per-client rate limits and the back-off of unknown names are kept per instance, in memory, until Redis is reachable: each instance allows the whole budget meanwhile",
    );
  } else {
    // several instances behind a load balancer would each allow the whole budget: say so
    app.log.info(
      { rateLimits },
      "per-client rate limits and the back-off of unknown names are kept per instance, in memory (no --redis-url): each instance allows the whole budget",
    );
  }
  const closed = new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      app.log.info({ signal }, "shutting down");
      // the request lines of the last requests may still sit in the asynchronous log buffer
      app.close().then(
        () => {
          app.flushLogs();
          resolve();
        },
        (error: unknown) => {
          app.log.error({ err: error }, "closing failed");
          app.flushLogs();
          resolve();
        },
      );
    };
    // on(), not once(): a second signal (systemd and the cluster primary both send one) must not
    // end the process before it has drained
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  return { url, closed };
}
