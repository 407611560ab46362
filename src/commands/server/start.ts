import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import { type Command, Option } from "commander";
import type { Context } from "../../cli/command-context.js";
import { loadServerAdmin } from "../../cli/compose.js";
import { CliError, EXIT, UsageError } from "../../cli/errors.js";
import { ROLES, type Role } from "../../contract/route.js";
import { examples, withContext } from "../verb-helpers.js";
import { addBooleanFlag, instanceOptions, OFF_WORDS, ON_WORDS, type StorageFlags, storageOptions } from "./options.js";

interface Options extends StorageFlags {
  host: string;
  port: string;
  publicUrl?: string;
  tokenTtl: string;
  maxSessions: string;
  importMaxItems: string;
  importMaxMb: string;
  importMaxOpen: string;
  inviteTtl: string;
  retainDeleted: string;
  auditRetentionDays: string;
  smtpUrl?: string;
  mailFrom?: string;
  loginRateLimit: string;
  redisUrl?: string;
  redisPrefix: string;
  logLevel: string;
  trustProxy?: string;
  allowPlaintextOverHttp?: boolean;
  workers: string;
  requireMfa?: string;
  metricsPort?: string;
  metricsHost: string;
}

function workerCount(value: string): number {
  if (value === "auto") return availableParallelism();
  return integer(value, "--workers", 1, 256);
}

function integer(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n < min || n > max)
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}.`);
  return n;
}

function redisUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let protocol: string | undefined;
  try {
    protocol = new URL(value).protocol;
  } catch {
    // reported below
  }
  if (protocol !== "redis:" && protocol !== "rediss:")
    throw new UsageError("--redis-url must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379.");
  return value;
}

const LIST_THEM = "list the addresses of the proxies in front, e.g. --trust-proxy 127.0.0.1 (or a range: 10.0.0.0/8)";

/** An IPv4 or IPv6 address, or a CIDR range of them (prefix 1 to 32 or 128 bits, as proxy-addr takes). */
function isAddressOrRange(entry: string): boolean {
  const [address = "", bits, ...rest] = entry.split("/");
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^[0-9]{1,3}$/.test(bits) && Number(bits) >= 1 && Number(bits) <= (version === 4 ? 32 : 128);
}

/**
 * `--trust-proxy A,B/n,…`: the peers whose X-Forwarded-For is believed. It was a switch that
 * believed any peer, so that a client reaching the server directly chose its own address: `true`
 * is refused with what to give instead, `false` and empty still trust no one.
 */
function trustedProxies(value: string | undefined): string[] {
  if (value === undefined || OFF_WORDS.has(value.trim().toLowerCase())) return [];
  if (ON_WORDS.has(value.trim().toLowerCase())) {
    throw new UsageError(
      `--trust-proxy (BIZCTL_TRUST_PROXY) no longer takes '${value}', which believed X-Forwarded-For from any client: ${LIST_THEM}.`,
    );
  }
  const entries = value.split(",").map((entry) => entry.trim());
  const bad = entries.find((entry) => !isAddressOrRange(entry));
  if (bad !== undefined) {
    throw new UsageError(
      `--trust-proxy (BIZCTL_TRUST_PROXY): '${bad}' is not an IP address or CIDR range; ${LIST_THEM}.`,
    );
  }
  return entries;
}

/** `--require-mfa admin,support`: the roles whose holders must enroll a second factor; empty or `none`: no one. */
function requiredMfaRoles(value: string | undefined): Role[] {
  if (value === undefined || value.trim() === "" || value.trim().toLowerCase() === "none") return [];
  const roles = value.split(",").map((role) => role.trim().toLowerCase());
  const bad = roles.find((role) => !(ROLES as readonly string[]).includes(role));
  if (bad !== undefined) {
    throw new UsageError(
      `--require-mfa (BIZCTL_REQUIRE_MFA): '${bad}' is not a role; give some of ${ROLES.join(", ")}, comma-separated (e.g. admin,support).`,
    );
  }
  return [...new Set(roles as Role[])];
}

async function start(ctx: Context, options: Options): Promise<void> {
  if (options.redisPrefix === "") throw new UsageError("--redis-prefix must not be empty.");
  const redis = redisUrl(options.redisUrl);
  const trustProxy = trustedProxies(options.trustProxy);
  const requireMfaRoles = requiredMfaRoles(options.requireMfa);
  const workers = workerCount(options.workers);
  const metricsPort =
    options.metricsPort === undefined ? undefined : integer(options.metricsPort, "--metrics-port", 0, 65535);
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === Number(options.port)) {
    throw new UsageError("--metrics-port must differ from --port: the metrics are never served on the API's port.");
  }
  const { startServer, startCluster, startWorker, isClusterWorker } = await loadServerAdmin();
  const listenOptions = {
    host: options.host,
    port: integer(options.port, "--port", 0, 65535),
    ...instanceOptions(options, ctx.io.env),
    publicUrl: options.publicUrl,
    tokenTtlSeconds: integer(options.tokenTtl, "--token-ttl", 60, 30 * 24 * 3600),
    maxSessionsPerUser: integer(options.maxSessions, "--max-sessions", 1, 10_000),
    imports: {
      maxItems: integer(options.importMaxItems, "--import-max-items", 1, 100_000_000),
      maxBytes: integer(options.importMaxMb, "--import-max-mb", 1, 1024 * 1024) * 1024 * 1024,
      maxOpen: integer(options.importMaxOpen, "--import-max-open", 1, 1000),
    },
    inviteTtlSeconds: integer(options.inviteTtl, "--invite-ttl", 1, 30 * 24 * 3600),
    retainDeletedDays: integer(options.retainDeleted, "--retain-deleted", 0, 10 * 365),
    requireMfaRoles,
    ...(metricsPort !== undefined && { metricsPort, metricsHost: options.metricsHost }),
    auditRetentionDays: integer(options.auditRetentionDays, "--audit-retention-days", 1, 100 * 365),
    trustProxy,
    allowPlaintextOverHttp: options.allowPlaintextOverHttp,
    smtpUrl: options.smtpUrl,
    mailFrom: options.mailFrom,
    loginRateLimit: { max: integer(options.loginRateLimit, "--login-rate-limit", 1, 1_000_000), timeWindowMs: 60_000 },
    redisUrl: redis,
    redisPrefix: options.redisPrefix,
    log: { level: options.logLevel },
    // an empty database would serve, but no one could ever log in to it
    requireInitialised: true,
  };
  if (await isClusterWorker()) {
    // a worker of --workers N: the primary announces the address
    await (await startWorker(listenOptions)).closed;
    return;
  }
  const listening = workers > 1 ? startCluster(listenOptions, workers) : startServer(listenOptions);
  const { url, closed } = await listening.catch((error: NodeJS.ErrnoException & { port?: number }) => {
    if (error.code === "EADDRINUSE" || error.code === "EACCES") {
      const why = error.code === "EADDRINUSE" ? "is already in use" : "needs privileges";
      // the metrics listener opens after the API's, on a port of its own
      const ofMetrics = metricsPort !== undefined && metricsPort !== 0 && error.port === metricsPort;
      const [host, port] = ofMetrics ? [options.metricsHost, metricsPort] : [options.host, options.port];
      throw new CliError(
        `Cannot listen on ${host}:${port}: the port ${why}.`,
        EXIT.failure,
        "listen_failed",
        `choose another ${ofMetrics ? "--metrics-port" : "--port"}`,
      );
    }
    throw error;
  });
  ctx.info(`bizctl server listening on ${url}${workers > 1 ? ` (${workers} workers)` : ""}`);
  // it runs until stopped: a log shows what it says as it happens
  ctx.sayHeldMessages();
  await closed;
}

export function register(group: Command, io: Context["io"]): void {
  const command = storageOptions(group.command("start"))
    .description("serve the API over HTTP (structured logs on stdout)")
    .addOption(new Option("--host <host>", "address to listen on").env("BIZCTL_HOST").default("127.0.0.1"))
    .addOption(new Option("--port <port>", "port (0 picks a free one)").env("BIZCTL_PORT").default("8080"))
    .addOption(
      new Option("--public-url <url>", "URL users reach the server at (for links in e-mails)").env("BIZCTL_PUBLIC_URL"),
    )
    .addOption(
      new Option(
        "--smtp-url <url>",
        "smtp(s)://user:pass@host:port to send mail (default: .eml files in <data-dir>/outbox)",
      ).env("BIZCTL_SMTP_URL"),
    )
    .addOption(new Option("--mail-from <addr>", "sender of e-mails").env("BIZCTL_MAIL_FROM"))
    .addOption(
      new Option("--login-rate-limit <n>", "logins and reset requests per client per minute")
        .env("BIZCTL_LOGIN_RATE_LIMIT")
        .default("30"),
    )
    .addOption(
      new Option(
        "--redis-url <url>",
        "redis(s)://[user:pass@]host:port[/db]: share the per-client rate limits between instances (default: per instance)",
      ).env("BIZCTL_REDIS_URL"),
    )
    .addOption(
      new Option("--redis-prefix <prefix>", "start of every Redis key: one per deployment sharing a Redis")
        .env("BIZCTL_REDIS_PREFIX")
        .default("bizctl:rl:"),
    )
    .addOption(
      new Option("--token-ttl <seconds>", "lifetime of access tokens, in seconds: 60 to 2592000 (30 days)")
        .env("BIZCTL_TOKEN_TTL")
        .default("28800"),
    )
    .addOption(
      new Option("--max-sessions <n>", "open login sessions per user; a login beyond ends the oldest")
        .env("BIZCTL_MAX_SESSIONS")
        .default("10"),
    )
    .addOption(
      new Option("--import-max-items <n>", "events one atomic import may stage")
        .env("BIZCTL_IMPORT_MAX_ITEMS")
        .default("100000"),
    )
    .addOption(
      new Option("--import-max-mb <mib>", "MiB of events one atomic import may stage")
        .env("BIZCTL_IMPORT_MAX_MB")
        .default("256"),
    )
    .addOption(
      new Option("--import-max-open <n>", "atomic imports one user may have open at once")
        .env("BIZCTL_IMPORT_MAX_OPEN")
        .default("2"),
    )
    .addOption(
      new Option("--invite-ttl <seconds>", "how long an invitation link works (default 72 hours)")
        .env("BIZCTL_INVITE_TTL")
        .default("259200"),
    )
    .addOption(
      new Option(
        "--retain-deleted <days>",
        "keep a deleted user or group this many days for a restore (0: delete at once)",
      )
        .env("BIZCTL_RETAIN_DELETED")
        .default("30"),
    )
    .addOption(
      new Option("--audit-retention-days <days>", "audit records older than this are pruned (hourly)")
        .env("BIZCTL_AUDIT_RETENTION_DAYS")
        .default("365"),
    )
    .addOption(
      new Option(
        "--require-mfa <roles>",
        "roles whose holders must enroll a second factor before anything else, comma-separated (e.g. admin,support)",
      ).env("BIZCTL_REQUIRE_MFA"),
    )
    .addOption(
      new Option(
        "--metrics-port <port>",
        "serve Prometheus metrics at /metrics on this port, a listener of its own (off without it)",
      ).env("BIZCTL_METRICS_PORT"),
    )
    .addOption(
      new Option("--metrics-host <host>", "address of the metrics listener")
        .env("BIZCTL_METRICS_HOST")
        .default("127.0.0.1"),
    )
    .addOption(new Option("--log-level <level>", "pino log level").env("BIZCTL_LOG_LEVEL").default("info"))
    .addOption(
      new Option("--workers <n|auto>", "processes serving the port (node:cluster); auto: one per core")
        .env("BIZCTL_WORKERS")
        .default("1"),
    );
  command.addOption(
    new Option(
      "--trust-proxy <addresses>",
      "believe X-Forwarded-* only from these reverse proxies: IP addresses or CIDR ranges, comma-separated (e.g. 127.0.0.1,10.0.0.0/8)",
    ).env("BIZCTL_TRUST_PROXY"),
  );
  addBooleanFlag(
    command,
    new Option(
      "--allow-plaintext-over-http",
      "development only: accept PLAINTEXT OAuth signatures over plain HTTP",
    ).env("BIZCTL_ALLOW_PLAINTEXT_OVER_HTTP"),
  );
  command
    .addHelpText(
      "after",
      examples(
        "bizctl server start --port 8080",
        "BIZCTL_SECRET_KEY_FILE=/etc/bizctl/secret BIZCTL_DATABASE_URL=postgres://bizctl@db/bizctl bizctl server start --host 0.0.0.0",
        "BIZCTL_SECRET_KEY_FILE=/etc/bizctl/secret bizctl server start --database postgres://bizctl@db/bizctl --redis-url redis://cache:6379",
        "bizctl server start --require-mfa admin,support",
        "bizctl server start --metrics-port 9464",
      ),
    )
    .action(withContext(io, start));
}
