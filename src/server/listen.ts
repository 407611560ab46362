import { buildApp } from "./app.js";
import type { MetricsListener } from "./metrics/listener.js";
import { dbSystemOf } from "./metrics/metrics.js";
import type { ServerOptions } from "./options.js";

export interface ListenOptions extends ServerOptions {
  host: string;
  port: number;
  /** `--metrics-port`: Prometheus' /metrics on a listener of its own (off without it) */
  metricsPort?: number;
  metricsHost?: string;
}

/** How a server's metrics leave it: its own listener, or (a worker of `--workers N`) the primary's. */
export type MetricsRoute = "listener" | "primary";

/** `server start`: listen, and close gracefully on SIGINT/SIGTERM (in-flight requests finish). */
export async function startServer(
  options: ListenOptions,
  metricsRoute: MetricsRoute = "listener",
): Promise<{ url: string; closed: Promise<void> }> {
  const metrics = options.metricsPort === undefined ? undefined : await prometheusFor(options);
  const tracing = process.env.OTEL_EXPORTER_OTLP_ENDPOINT ? await tracingFor() : undefined;
  const app = await buildApp({
    mailSenderLoop: true,
    ...options,
    ...(metrics && { metrics }),
    ...(tracing && { tracing }),
  });
  const url = await app.listen({ host: options.host, port: options.port });
  app.useListenUrl(url);
  let metricsListener: MetricsListener | undefined;
  if (metrics && metricsRoute === "primary") {
    (await import("./metrics/prometheus.js")).shareWithPrimary(metrics.registry);
  } else if (metrics) {
    try {
      metricsListener = await serveMetrics(metrics.registry, options);
    } catch (error) {
      await app.close();
      throw error;
    }
    app.log.info({ metrics: metricsListener.url }, "metrics listening");
  }
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
      Promise.all([app.close(), metricsListener?.close()]).then(
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

declare const BIZCTL_VERSION: string;

/** OpenTelemetry's SDK, loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
async function tracingFor() {
  const { startTracing } = await import("./tracing/otel.js");
  return startTracing(typeof BIZCTL_VERSION === "string" ? BIZCTL_VERSION : "0.0.0-dev");
}

/** Prometheus' metrics, loaded only when asked for: a server without them never imports prom-client. */
async function prometheusFor(options: ListenOptions) {
  const { prometheusMetrics } = await import("./metrics/prometheus.js");
  return prometheusMetrics(dbSystemOf(options.databaseUrl));
}

async function serveMetrics(
  registry: import("prom-client").Registry,
  options: ListenOptions,
): Promise<MetricsListener> {
  return listenForMetricsOf(
    async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    options,
  );
}

/** The metrics listener of `options` (`--metrics-host`, `--metrics-port`), serving what `scrape` gathers. */
export async function listenForMetricsOf(
  scrape: () => Promise<{ contentType: string; body: string }>,
  options: ListenOptions,
): Promise<MetricsListener> {
  const { listenForMetrics } = await import("./metrics/listener.js");
  return listenForMetrics(scrape, options.metricsHost ?? "127.0.0.1", options.metricsPort!);
}
