import type { DestinationStream } from "pino";
import { DEFAULT_PASSWORD_MIN_LENGTH } from "../contract/passwords.js";
import type { Role } from "../contract/route.js";
import type { Metrics } from "./metrics/metrics.js";
import type { Clock, ImportQuota } from "./services/service-context.js";
import type { Tracing } from "./tracing/tracing.js";

export interface ServerOptions {
  /** where the SQLite file, the keys and the outbox live */
  dataDir: string;
  /** `postgres://…` or a SQLite path; default `<dataDir>/bizctl.db` */
  databaseUrl?: string;
  /**
   * The deployment secret (base64 of 32 bytes) that seals the signing keys kept in the database;
   * required on PostgreSQL, optional on SQLite (without it the keys are files in the data dir)
   */
  secretKey?: string;
  /** the URL users reach the server at; links in e-mails are built from it, never from Host */
  publicUrl?: string;
  tokenTtlSeconds?: number;
  /** open login sessions a user may hold; a login beyond ends the oldest (`--max-sessions`) */
  maxSessionsPerUser?: number;
  passwordMinLength?: number;
  bodyLimitBytes?: number;
  /** false: silent (the embedded CLI); otherwise pino at this level, to this stream */
  log?: false | { level: string; stream?: DestinationStream };
  /**
   * The addresses or CIDR ranges of the reverse proxies in front (`--trust-proxy`): X-Forwarded-*
   * is believed only from a peer in the list, and only the hops in it are skipped to find the
   * client. Empty or absent: the header is ignored, the client is the peer.
   */
  trustProxy?: string[];
  clock?: Clock;
  /** smtp(s)://… ; without it mail is written as .eml files into `<dataDir>/outbox` */
  smtpUrl?: string;
  mailFrom?: string;
  resetTokenTtlSeconds?: number;
  /** how long an invitation link works (`--invite-ttl`) */
  inviteTtlSeconds?: number;
  /** how many days a deleted User or Group is kept for a restore (`--retain-deleted`); 0 deletes at once */
  retainDeletedDays?: number;
  /**
   * The roles whose holders must have a second factor (`--require-mfa`): until they enroll one,
   * their logins may only enroll it (403 `mfa_enrollment_required` elsewhere)
   */
  requireMfaRoles?: readonly Role[];
  /**
   * Where the app reports its metrics (`server start --metrics-port` passes Prometheus'); none
   * without it, and nothing is timed
   */
  metrics?: Metrics;
  /** OpenTelemetry's tracing (`server start` with OTEL_EXPORTER_OTLP_ENDPOINT); none without it */
  tracing?: Tracing;
  /** per-client requests per window on login and renewPassword */
  loginRateLimit?: { max: number; timeWindowMs: number };
  /**
   * `redis://…` or `rediss://…`: the per-client rate limits are counted in Redis, so every
   * instance shares one budget; without it each instance counts alone, in memory
   */
  redisUrl?: string;
  /** the start of every Redis key: one per deployment, so that deployments (and tests) sharing a Redis stay apart */
  redisPrefix?: string;
  /**
   * Refuse (NotInitialisedError) a database that `server init` never prepared, and create nothing:
   * no SQLite file, or no user in it (the embedded CLI and `server start`; init itself does not)
   */
  requireInitialised?: boolean;
  /** SQLite: the connection's page cache in KiB (default better-sqlite3's 16 MiB; the embedded CLI takes less) */
  sqliteCacheKiB?: number;
  /** compile each route's schemas when it is first used (the embedded CLI serves one request) */
  compileSchemasOnFirstUse?: boolean;
  /**
   * Fastify's schema compilers in place of its own (and of compileSchemasOnFirstUse's): the
   * build's, which keep each route's compiled code for the server bundle (scripts/build.mjs)
   */
  schemaCompilers?: { buildValidator: unknown; buildSerializer: unknown };
  /** the first mail retry waits this long, each further one twice as long (tests shorten it) */
  mailRetryDelayMs?: number;
  /** attempts before a queued message is given up (kept, with its last error) */
  mailMaxAttempts?: number;
  /** sent messages are deleted from the queue after this long */
  mailRetentionMs?: number;
  /**
   * true (`server start`): a loop sends whatever is due in the queue, retrying. false (the default:
   * the embedded CLI, admin commands, tests): the app sends only the mail it queued itself, once,
   * on idle() or as it closes, and leaves the rest of the queue to the servers
   */
  mailSenderLoop?: boolean;
  /**
   * Against slow clients (slowloris): a request's headers must arrive within headersTimeoutMs and
   * the whole request within requestTimeoutMs (else 408 request_timeout and the connection
   * closes); an idle keep-alive connection closes after keepAliveTimeoutMs, and any socket after
   * connectionTimeoutMs without traffic
   */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  connectionTimeoutMs?: number;
  /** development only: accept PLAINTEXT OAuth signatures over plain HTTP (refused by default) */
  allowPlaintextOverHttp?: boolean;
  /**
   * where the failed logins of names without an account are counted without Redis: this process's
   * memory (a server), or a file of the data dir (the embedded CLI, a process per command)
   */
  nameFailuresIn?: "memory" | "data-dir";
  /** atomic event imports: events and MiB one may stage, imports one user may have open */
  imports?: Partial<ImportQuota>;
  /** audit records older than this many days are pruned by the server (`--audit-retention-days`) */
  auditRetentionDays?: number;
}

export const DEFAULTS = {
  tokenTtlSeconds: 8 * 3600,
  maxSessionsPerUser: 10,
  passwordMinLength: DEFAULT_PASSWORD_MIN_LENGTH,
  bodyLimitBytes: 1024 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  // longer than the idle timeout of the proxies in front (60 s for most), so that the server never
  // closes a connection a proxy is about to reuse
  keepAliveTimeoutMs: 72_000,
  connectionTimeoutMs: 120_000,
  resetTokenTtlSeconds: 30 * 60,
  inviteTtlSeconds: 72 * 3600,
  retainDeletedDays: 30,
  auditRetentionDays: 365,
  imports: { maxItems: 100_000, maxBytes: 256 * 1024 * 1024, maxOpen: 2 },
  mailFrom: "bizctl <no-reply@localhost>",
  loginRateLimit: { max: 30, timeWindowMs: 60_000 },
  redisPrefix: "bizctl:rl:",
  /** links in e-mails when neither a public URL nor a listening address is known (embedded mode) */
  linkBase: "http://127.0.0.1:8080",
} as const;
