import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { LightHistogram } from "./light-histogram.js";
import type { Metrics, ScrapeSource } from "./metrics.js";

/**
 * The metrics of one app in Prometheus' model (prom-client), named after OpenTelemetry's semantic
 * conventions where they have one (`http.server.request.duration` becomes
 * `http_server_request_duration_seconds`), `bizctl_` where they are ours. Every label has a
 * bounded set of values: route templates, methods, status codes, problem codes, statement kinds.
 * Loaded only by `server start --metrics-port`.
 */
export interface PrometheusMetrics extends Metrics {
  registry: Registry;
}

// OpenTelemetry's advice for http.server.request.duration and db.client.operation.duration
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
// a method outside HTTP's own is "_OTHER" (OpenTelemetry's rule), so that no caller invents labels
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"]);

/**
 * `registry`: a new one by default; a worker of `--workers N` passes the one the primary gathers
 * from. `dbSystem`: "sqlite" or "postgresql", the label of the database metrics.
 */
export function prometheusMetrics(dbSystem: string, registry = new Registry()): PrometheusMetrics {
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  // the three a request observes on its path: light ones (light-histogram.ts)
  const light = (name: string, help: string) => {
    const histogram = new LightHistogram(name, help, DURATION_BUCKETS);
    registry.registerMetric(histogram as never);
    return histogram;
  };
  const requests = light(
    "http_server_request_duration_seconds",
    "Duration of HTTP server requests, by method, route template and status code",
  );
  const logins = new Counter({
    name: "bizctl_logins_total",
    help: 'Logins (POST /auth/login) by outcome: "success" or the problem code of the refusal',
    labelNames: ["outcome"],
    registers,
  });
  const auditFailures = new Counter({
    name: "bizctl_audit_write_failures_total",
    help: "Audit records that could not be written",
    registers,
  });
  const queries = light(
    "db_client_operation_duration_seconds",
    "Duration of database statements, by kind (select, insert, ...)",
  );
  const transactions = light(
    "bizctl_db_transaction_duration_seconds",
    "Duration of database transactions, from begin to commit or rollback",
  );
  const groupCommits = new Histogram({
    name: "bizctl_group_commit_writes",
    help: "Writes run together in one transaction by a group commit",
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers,
  });
  let source: ScrapeSource | undefined;
  // read at each scrape; the state of the whole deployment, so with --workers N the primary keeps
  // one worker's figure ("first") rather than adding up N copies of the same
  new Gauge({
    name: "bizctl_sessions_open",
    help: "Sessions neither ended nor expired (logins and OAuth grants)",
    aggregator: "first",
    registers,
    async collect() {
      if (source) this.set(await source.openSessions());
    },
  });
  const mailQueue = async () => (source ? await source.mailQueue() : { depth: 0, oldestAgeSeconds: 0 });
  new Gauge({
    name: "bizctl_mail_queue_depth",
    help: "Messages queued and not yet sent",
    aggregator: "first",
    registers,
    async collect() {
      this.set((await mailQueue()).depth);
    },
  });
  new Gauge({
    name: "bizctl_mail_queue_oldest_age_seconds",
    help: "Age of the oldest message still queued (0 when none is)",
    aggregator: "first",
    registers,
    async collect() {
      this.set((await mailQueue()).oldestAgeSeconds);
    },
  });
  new Gauge({
    name: "db_client_connection_count",
    help: "Connections of the database pool, by state (PostgreSQL)",
    labelNames: ["db_system_name", "state"],
    registers,
    collect() {
      const pool = source?.pool?.();
      if (!pool) return;
      this.set({ db_system_name: dbSystem, state: "idle" }, pool.idle);
      this.set({ db_system_name: dbSystem, state: "used" }, pool.used);
    },
  });
  new Gauge({
    name: "db_client_connection_pending_requests",
    help: "Requests waiting for a connection of the database pool (PostgreSQL)",
    labelNames: ["db_system_name"],
    registers,
    collect() {
      const pool = source?.pool?.();
      if (pool) this.set({ db_system_name: dbSystem }, pool.pending);
    },
  });

  return {
    registry,
    request(method, route, status, seconds) {
      const known = KNOWN_METHODS.has(method) ? method : "_OTHER";
      const series = requests.series(`${known} ${status} ${route}`, () => ({
        http_request_method: known,
        http_route: route,
        http_response_status_code: status,
      }));
      requests.observe(series, seconds);
    },
    login: (outcome) => logins.inc({ outcome }),
    auditWriteFailure: () => auditFailures.inc(),
    store: {
      query: (operation, seconds) =>
        queries.observe(
          queries.series(operation, () => ({ db_system_name: dbSystem, db_operation_name: operation })),
          seconds,
        ),
      transaction: (outcome, seconds) =>
        transactions.observe(
          transactions.series(outcome, () => ({ db_system_name: dbSystem, outcome })),
          seconds,
        ),
      groupCommit: (writes) => groupCommits.observe(writes),
    },
    watch(watched) {
      source = watched;
    },
  };
}

/**
 * `--workers N`: a worker's metrics go to the primary, which asks every worker at each scrape
 * (prom-client's cluster messages) and serves the sum on the one metrics listener.
 */
export function shareWithPrimary(registry: Registry): void {
  AggregatorRegistry.setRegistries([registry]);
  // prom-client's worker starts answering the primary when an AggregatorRegistry is made, not before
  new AggregatorRegistry();
}

/** The primary's scrape: every worker's metrics, added up (the deployment-wide gauges: one worker's). */
export function clusterScrape(): () => Promise<{ contentType: string; body: string }> {
  const aggregator = new AggregatorRegistry();
  return async () => ({ contentType: aggregator.contentType, body: await aggregator.clusterMetrics() });
}
