/**
 * What the server tells an operator's metrics (spec 1.8), as plain calls: the services and the
 * store call these and know nothing of Prometheus. Off by default (NO_METRICS), so that a server
 * without `--metrics-port`, and the embedded CLI, pay for nothing but a call that does nothing.
 */
export interface Metrics {
  /** one answered request: the route's template (never the path itself; "" when none matched) */
  request(method: string, route: string, status: number, seconds: number): void;
  /** a login's outcome: "success" or the problem code it was refused with */
  login(outcome: string): void;
  /** an audit record that could not be written (a refusal's record, which is written on its own) */
  auditWriteFailure(): void;
  store: StoreObserver;
  /** the gauges read when scraped, from the app's store and mail queue */
  watch(source: ScrapeSource): void;
}

/** What the store reports as it runs. */
export interface StoreObserver {
  /** one statement: its kind (select, insert, …) */
  query(operation: string, seconds: number): void;
  /** one transaction, from its begin to its commit or rollback */
  transaction(outcome: "commit" | "rollback", seconds: number): void;
  /** the writes one group commit ran in one transaction */
  groupCommit(writes: number): void;
}

/** What a scrape reads of the deployment's state. */
export interface ScrapeSource {
  openSessions(): Promise<number>;
  mailQueue(): Promise<{ depth: number; oldestAgeSeconds: number }>;
  /** PostgreSQL's connection pool; undefined on SQLite (one connection) */
  pool?(): { idle: number; used: number; pending: number };
}

const nothing = () => {};

export const NO_METRICS: Metrics = {
  request: nothing,
  login: nothing,
  auditWriteFailure: nothing,
  store: { query: nothing, transaction: nothing, groupCommit: nothing },
  watch: nothing,
};

/** The kind of a statement, from its first word: a bounded label whatever the SQL. */
export function operationOf(sql: string): string {
  const word = /^\s*([a-z]+)/i.exec(sql)?.[1]?.toLowerCase();
  return word && OPERATIONS.has(word) ? word : "other";
}

const OPERATIONS = new Set([
  "select",
  "insert",
  "update",
  "delete",
  "with",
  "begin",
  "commit",
  "rollback",
  "savepoint",
  "release",
  "pragma",
  "create",
  "alter",
  "drop",
]);

/** OpenTelemetry's name of the database a URL selects: "postgresql", or "sqlite" (the default). */
export function dbSystemOf(databaseUrl: string | undefined): string {
  return databaseUrl && /^postgres(ql)?:\/\//i.test(databaseUrl) ? "postgresql" : "sqlite";
}
