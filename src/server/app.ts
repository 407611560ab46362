import { existsSync } from "node:fs";
import { join } from "node:path";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  type HTTPMethods,
  LogController,
} from "fastify";
import { PROBLEM_CONTENT_TYPE, Problem } from "../contract/errors.js";
import { ScimError } from "../contract/scim.js";
import { NotInitialisedError } from "./configuration-error.js";
import { routablePath } from "./http/routable-path.js";
import { createMailer } from "./mail/mailer.js";
import { dbSystemOf, NO_METRICS } from "./metrics/metrics.js";
import { installOpenApi } from "./openapi.js";
import { DEFAULTS, type ServerOptions } from "./options.js";
import { allowedMethods, collectAllowedMethods } from "./plugins/allowed-methods.js";
import { clientErrorHandler } from "./plugins/client-errors.js";
import { installJsonBodies } from "./plugins/json-bodies.js";
import { lazySchemaController } from "./plugins/lazy-compilers.js";
import { installMetrics } from "./plugins/metrics.js";
import { installProblemHandling, sendNotFound, sendProblem } from "./plugins/problem-replies.js";
import { installRateLimits, type RateLimitStore } from "./plugins/rate-limits.js";
import { aimsAtScimEndpoint } from "./plugins/scim-wire.js";
import { installSecurityHeaders, setSecurityHeaders } from "./plugins/security-headers.js";
import { installTracing } from "./plugins/tracing.js";
import { ProblemError } from "./problem-error.js";
import { loggerOptions, requestChildLoggers, requestLine, stdoutDestination } from "./request-log.js";
import { accessRoutes } from "./routes/access.js";
import { apiTokenRoutes } from "./routes/api-tokens.js";
import { auditRoutes } from "./routes/audit.js";
import { authRoutes } from "./routes/auth.js";
import { bulkRoutes } from "./routes/bulk.js";
import { deletedGroupRoutes } from "./routes/deleted-groups.js";
import { deletedUserRoutes } from "./routes/deleted-users.js";
import { diagnosisRoutes } from "./routes/diagnosis.js";
import { eventRoutes } from "./routes/events.js";
import { invitationRoutes } from "./routes/invitations.js";
import { mfaRoutes } from "./routes/mfa.js";
import { oauthRoutes } from "./routes/oauth.js";
import { resourceRoutes } from "./routes/resources.js";
import { discoveryRoutes } from "./routes/scim-discovery.js";
import { groupRoutes } from "./routes/scim-groups.js";
import { userRoutes } from "./routes/scim-users.js";
import { serviceRoutes } from "./routes/service.js";
import { serviceAccountRoutes } from "./routes/service-accounts.js";
import { sessionRoutes } from "./routes/sessions.js";
import { pruneAuditTrail } from "./services/audit-list.js";
import { openKeyStorage } from "./services/key-storage.js";
import { KeyRing } from "./services/keys.js";
import { renderLinkMail } from "./services/link-mails.js";
import { FORGET_FAILURES_AFTER_MS } from "./services/login-backoff.js";
import { resolveResetRequest } from "./services/recovery.js";
import { openSealer } from "./services/sealing.js";
import type { ServiceContext } from "./services/service-context.js";
import { hasUsers, openStore, sqliteFile } from "./store/database.js";
import { migrateToLatest } from "./store/migrator.js";
import { fileNameFailures, memoryNameFailures, redisNameFailures } from "./store/name-failures.js";

/** What to name in a "never initialised" message: the data dir, unless the database lives elsewhere. */
function where(dataDir: string, file: string | undefined, database?: string): string {
  if (!file) return `The database ${database}`;
  return file === join(dataDir, "bizctl.db") ? `The data dir ${dataDir}` : `The database ${file}`;
}

/**
 * The timeouts against slow clients (slowloris). Node checks the header and request timeouts
 * every connectionsCheckingInterval (30 s by default): a quarter of the headers timeout, so that
 * a slow client is cut off close to the time configured, not up to 30 s later.
 */
function slowClientLimits(options: ServerOptions) {
  const headersTimeout = options.headersTimeoutMs ?? DEFAULTS.headersTimeoutMs;
  return {
    requestTimeout: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULTS.keepAliveTimeoutMs,
    connectionTimeout: options.connectionTimeoutMs ?? DEFAULTS.connectionTimeoutMs,
    http: {
      headersTimeout,
      connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(headersTimeout / 4))),
    },
  };
}

export interface BuiltApp extends FastifyInstance {
  services: ServiceContext;
  /** the address `listen()` got: the base of e-mailed links when no public URL is configured */
  useListenUrl(url: string): void;
  /** where the per-client rate limits are counted now (Redis, shared; or this instance's memory) */
  readonly rateLimits: RateLimitStore;
  /** writes out every log line still buffered (the asynchronous stdout destination); close() does it too */
  flushLogs(): void;
}

/** How often a server prunes the audit trail; every instance does, and a second prune finds nothing. */
const AUDIT_PRUNE_EVERY_MS = 3600_000;

/**
 * Retention of the audit trail, run by the servers (`server start`, beside the mail loop), not by
 * each embedded command: once at start, then hourly. A failed prune is logged and tried again.
 */
function pruneAuditPeriodically(services: ServiceContext, days?: number): () => void {
  const prune = () =>
    pruneAuditTrail(services, days ?? DEFAULTS.auditRetentionDays).then(
      (removed) => removed > 0 && services.log().info({ removed }, "pruned audit records past retention"),
      (error) => services.log().warn({ err: error }, "could not prune the audit trail"),
    );
  void prune();
  const timer = setInterval(prune, AUDIT_PRUNE_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

const definedOnly = <T extends object>(values: T): Partial<T> =>
  Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;

/** Whether a route serves the path with the request's method, or with another (a 405 then). */
const servesPath = (request: FastifyRequest, path: string) =>
  request.server.findRoute({ method: request.method as HTTPMethods, url: path }) !== null ||
  allowedMethods(request, path) !== undefined;

/** The whole HTTP application, ready for inject() or listen(); it never listens itself. */
export async function buildApp(options: ServerOptions): Promise<BuiltApp> {
  const clock = options.clock ?? (() => new Date());
  const storeOptions = { dataDir: options.dataDir, databaseUrl: options.databaseUrl };
  const file = sqliteFile(storeOptions);
  if (options.requireInitialised && file && !existsSync(file)) {
    throw new NotInitialisedError(
      `${where(options.dataDir, file)} was never initialised: there is no database at ${file}.`,
    );
  }
  const metrics = options.metrics ?? NO_METRICS;
  const { tracing } = options;
  const observer = tracing
    ? tracing.observeStore(metrics.store, dbSystemOf(options.databaseUrl))
    : options.metrics && metrics.store;
  let tightened: string[] = [];
  const store = await openStore({
    ...storeOptions,
    onTightened: (paths) => {
      tightened = paths;
    },
    mustExist: options.requireInitialised,
    ...(options.sqliteCacheKiB !== undefined && { cacheKiB: options.sqliteCacheKiB }),
    ...(observer && { observer }),
  });
  let keys: KeyRing;
  try {
    if (options.requireInitialised && !(await hasUsers(store))) {
      throw new NotInitialisedError(
        `${where(options.dataDir, file, store.describe)} was never initialised: it has no users.`,
      );
    }
    await migrateToLatest(store.db, store.dialect);
    keys = await KeyRing.open(
      await openKeyStorage({ store, dataDir: options.dataDir, secretKey: options.secretKey }),
      clock,
    );
  } catch (error) {
    await store.close();
    throw error;
  }
  let listenUrl: string | undefined;
  let logger: FastifyBaseLogger | undefined;
  const log = () => {
    if (!logger) throw new Error("logger used before the app was built");
    return logger;
  };
  const publicUrl = options.publicUrl?.replace(/\/+$/, "");
  const services: ServiceContext = {
    store,
    keys,
    clock,
    tokenTtlSeconds: options.tokenTtlSeconds ?? DEFAULTS.tokenTtlSeconds,
    maxSessionsPerUser: options.maxSessionsPerUser ?? DEFAULTS.maxSessionsPerUser,
    imports: { ...DEFAULTS.imports, ...definedOnly(options.imports ?? {}) },
    // in Redis once the rate limits have connected to it (below), with this store behind it
    nameFailures:
      options.nameFailuresIn === "data-dir"
        ? fileNameFailures(join(options.dataDir, "login-names.json"), FORGET_FAILURES_AFTER_MS)
        : memoryNameFailures(FORGET_FAILURES_AFTER_MS),
    passwordPolicy: { minLength: options.passwordMinLength ?? DEFAULTS.passwordMinLength },
    publicUrl,
    allowPlaintextOverHttp: options.allowPlaintextOverHttp ?? false,
    linkBase: () => publicUrl ?? listenUrl ?? DEFAULTS.linkBase,
    resetTokenTtlSeconds: options.resetTokenTtlSeconds ?? DEFAULTS.resetTokenTtlSeconds,
    inviteTtlSeconds: options.inviteTtlSeconds ?? DEFAULTS.inviteTtlSeconds,
    retainDeletedDays: options.retainDeletedDays ?? DEFAULTS.retainDeletedDays,
    requireMfaRoles: options.requireMfaRoles ?? [],
    metrics,
    log,
    // SQLite without a secret: a key file beside the signing key files (keys/), made when first needed
    sealer: openSealer({ secretKey: options.secretKey, keyFile: join(options.dataDir, "keys", "sealing.key") }),
    mailer: createMailer({
      store,
      smtpUrl: options.smtpUrl,
      outboxDir: join(options.dataDir, "outbox"),
      from: options.mailFrom ?? DEFAULTS.mailFrom,
      log,
      retryDelayMs: options.mailRetryDelayMs,
      maxAttempts: options.mailMaxAttempts,
      retentionMs: options.mailRetentionMs,
      loop: options.mailSenderLoop,
      ...(tracing && { traceSend: tracing.smtpSend }),
    }),
  };

  services.mailer.handleJobs("password_reset", (trx, request, queue) =>
    resolveResetRequest(services, trx, request, queue),
  );
  services.mailer.renderLinks((trx, mailId, content) => renderLinkMail(services, trx, mailId, content));

  // loaded only by a server that logs: an embedded command logs nothing and does without it
  const pino = options.log ? (await import("pino")).default : undefined;
  const destination = pino && options.log && !options.log.stream ? stdoutDestination(pino) : undefined;
  const logStream = options.log ? (options.log.stream ?? destination) : undefined;
  const app = Fastify({
    ...loggerOptions(options.log, logStream),
    bodyLimit: options.bodyLimitBytes ?? DEFAULTS.bodyLimitBytes,
    ...slowClientLimits(options),
    // what the HTTP parser refuses (headers too large, a garbage request line) and timed-out
    // requests are answered with problem documents too, not Fastify's own body
    clientErrorHandler,
    // the proxies listed, not any peer: a client that reaches the server directly, or sends an
    // X-Forwarded-For through them, cannot pick its address (and so its rate-limit budget)
    trustProxy: options.trustProxy?.length ? options.trustProxy : false,
    // a request that reaches a kept-alive connection while the server drains is served, with
    // Connection: close, rather than refused with Fastify's own 503 JSON body: the next one then
    // finds the port closed, which clients treat as the outage it is
    return503OnClosing: false,
    // the request id is the server's own, whatever traceparent says: a caller could give any
    // number of requests one trace id (spec 1.8); the trace id is logged beside it
    genReqId: tracing
      ? (raw) => {
          const id = crypto.randomUUID();
          tracing.startRequest(raw, id);
          return id;
        }
      : () => crypto.randomUUID(),
    ...(pino && { childLoggerFactory: requestChildLoggers(pino) }),
    // errors Fastify meets before routing (a malformed URL) leave as problem documents too
    frameworkErrors: (error, request, reply) => {
      setSecurityHeaders(request, reply);
      // a malformed escape stops the router before it looks the path up; a path no route serves
      // is 404 whatever else is wrong with the request, as it is for a body
      if (error.code === "FST_ERR_BAD_URL" && !servesPath(request, routablePath(request.url))) {
        return sendNotFound(request, reply);
      }
      return sendProblem(
        reply,
        request,
        new ProblemError("validation_failed", `The request is malformed: ${error.message}`),
        aimsAtScimEndpoint(request.url),
      );
    },
    // one line per request, written when it completes (see below), instead of Fastify's two
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    ajv: {
      customOptions: {
        coerceTypes: false,
        removeAdditional: false,
        useDefaults: true,
        allErrors: true,
        // checking our schemas against JSON Schema's meta-schema is for the server and the tests
        validateSchema: !options.compileSchemasOnFirstUse,
      },
    },
    ...(options.schemaCompilers
      ? { schemaController: { compilersFactory: options.schemaCompilers } as never }
      : options.compileSchemasOnFirstUse && { schemaController: lazySchemaController() as never }),
  });
  logger = app.log;
  app.decorate("services", services);
  app.decorate("useListenUrl", (url: string) => {
    listenUrl = url;
  });
  const flushLogs = () => destination?.flushSync();
  app.decorate("flushLogs", flushLogs);
  const stopRefreshingKeys = keys.refreshPeriodically((error) =>
    app.log.warn({ err: error }, "could not re-read the signing keys; keeping those loaded"),
  );
  let stopPruning = () => {};
  // server.close() ends the connections idle at that moment; one whose request is still in flight
  // would stay open after its answer until its keep-alive timeout, and hold up the drain with it
  let closingIdle: NodeJS.Timeout | undefined;
  app.addHook("preClose", (done) => {
    closingIdle = setInterval(() => app.server.closeIdleConnections(), 50).unref();
    done();
  });
  app.addHook("onClose", async () => {
    clearInterval(closingIdle);
    stopPruning();
    stopRefreshingKeys();
    await services.mailer.close();
    await store.close();
    // the spans of the last requests and of the closing itself are still in the batch
    await tracing?.shutdown();
    flushLogs();
  });

  if (tightened.length > 0) {
    app.log.warn(
      { paths: tightened },
      "other local users could read files of the data dir: they are owner-only now (directories 0700, files 0600)",
    );
  }
  const logRequest =
    pino && options.log && logStream && requestLine(pino, options.log.level, logStream, tracing?.traceId);
  if (logRequest) app.addHook("onResponse", logRequest);
  if (options.metrics) installMetrics(app, services, options.metrics);
  if (tracing) installTracing(app, tracing);
  installProblemHandling(app);
  installJsonBodies(app);
  installSecurityHeaders(app);
  app.addSchema(Problem);
  app.addSchema(ScimError);

  await installOpenApi(app, { publicUrl });
  const answerOtherMethods = collectAllowedMethods(app);
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());

  const limits = await installRateLimits(app, {
    redisUrl: options.redisUrl,
    prefix: options.redisPrefix ?? DEFAULTS.redisPrefix,
  });
  // a getter: with Redis the answer changes while it is away
  app.decorate<RateLimitStore>("rateLimits", { getter: limits.describe });
  if (limits.redis) {
    const prefix = options.redisPrefix ?? DEFAULTS.redisPrefix;
    services.nameFailures = redisNameFailures(
      limits.redis.client,
      prefix,
      services.nameFailures,
      limits.redis.health,
      FORGET_FAILURES_AFTER_MS,
    );
  }
  serviceRoutes(app, services, limits.probe && { redis: limits.probe });
  const { loginLimit } = authRoutes(app, services, {
    rateLimit: options.loginRateLimit ?? DEFAULTS.loginRateLimit,
  });
  eventRoutes(app, services);
  resourceRoutes(app, services);
  sessionRoutes(app, services);
  mfaRoutes(app, services);
  diagnosisRoutes(app, services);
  accessRoutes(app, services);
  invitationRoutes(app, services);
  bulkRoutes(app, services);
  userRoutes(app, services);
  groupRoutes(app, services);
  deletedUserRoutes(app, services);
  deletedGroupRoutes(app, services);
  discoveryRoutes(app, services, { bodyLimitBytes: options.bodyLimitBytes ?? DEFAULTS.bodyLimitBytes });
  oauthRoutes(app, services, { loginLimit });
  auditRoutes(app, services);
  apiTokenRoutes(app, services);
  serviceAccountRoutes(app, services);
  // the routes of registered scopes (the OAuth endpoint's) are added when they load
  await app.after();
  answerOtherMethods();
  await app.ready();
  services.mailer.start();
  if (options.mailSenderLoop) stopPruning = pruneAuditPeriodically(services, options.auditRetentionDays);
  return app as unknown as BuiltApp;
}

export { PROBLEM_CONTENT_TYPE };
