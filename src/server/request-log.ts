import type { FastifyBaseLogger, FastifyReply, FastifyRequest, FastifyServerOptions } from "fastify";
import type { DestinationStream } from "pino";

// The server's request logging: what a log line shows of a request, the logger's options, and the
// one line per request written without pino on the hot path.

type Pino = typeof import("pino").default;

const SENSITIVE_QUERY = /([?&](?:token|oauth_token|oauth_verifier|oauth_signature)=)[^&]*/gi;

/**
 * The default destination of `server start`: stdout written asynchronously, so that the request
 * log line never blocks the event loop on a slow disk or a full pipe. No `minLength`: a line goes
 * out as soon as the previous write completes (lines written meanwhile leave together), so an
 * idle server's log is never behind. `flushSync()` on close, and pino's own exit hook, write what
 * is still buffered.
 */
export function stdoutDestination(pino: Pino): DestinationStream & { flushSync(): void } {
  return pino.destination({ dest: 1, sync: false });
}

interface LoggedRequest {
  method: string;
  url: string;
  id: string;
  ip?: string;
}

/** What a log line shows of a request: no headers, and the secrets of its query masked. */
function serializeRequest(req: LoggedRequest) {
  return {
    method: req.method,
    // only a parameter with a value can hold a secret: most URLs skip the regular expression
    url: req.url.includes("=") ? req.url.replace(SENSITIVE_QUERY, "$1***") : req.url,
    id: req.id,
    remoteAddress: req.ip,
  };
}

/** `log` as ServerOptions has it: false or absent is silent */
export function loggerOptions(log: false | { level: string } | undefined, stream: DestinationStream | undefined) {
  if (!log) return { logger: false as const };
  return {
    logger: {
      level: log.level,
      ...(stream && { stream }),
      redact: [
        "req.headers.authorization",
        "req.headers.cookie",
        "*.password",
        "*.passwordHash",
        "*.newPassword",
        "*.lastPassword",
        "*.token",
      ],
      serializers: { req: serializeRequest },
    },
  };
}

/**
 * Fastify makes a child logger for every request, bound to its id; pino's child() runs the
 * redaction over each binding (a wildcard path covers every top-level key) and rebuilds its
 * formatters, about a microsecond per request on the hot path. The request's logger is the same
 * child, made by hand: one child built once, and per request an object on top of it whose
 * bindings are the child's with the id appended, serialized as pino would (the redaction
 * changes nothing in a string). A route with a log level or serializers of its own gets
 * pino's child as before.
 */
export function requestChildLoggers(pino: Pino): FastifyServerOptions["childLoggerFactory"] {
  const { chindingsSym } = pino.symbols;
  const templates = new WeakMap<object, FastifyBaseLogger>();
  return (logger, bindings, options) => {
    const keys = Object.keys(bindings);
    const key = keys[0] as string;
    const value = bindings[key];
    if (
      options.level !== undefined ||
      options.serializers !== undefined ||
      keys.length !== 1 ||
      typeof value !== "string"
    ) {
      return logger.child(bindings, options);
    }
    let template = templates.get(logger);
    if (!template) {
      template = logger.child({});
      templates.set(logger, template);
    }
    const child = Object.create(template) as FastifyBaseLogger & Record<symbol, string>;
    child[chindingsSym] =
      `${(template as unknown as Record<symbol, string>)[chindingsSym]},${JSON.stringify(key)}:${JSON.stringify(value)}`;
    return child;
  };
}

/**
 * The one line per request, written when it completes, as a callback hook (no promise per
 * request). The line is built here rather than by a logger: it holds only the request id (and trace id), the
 * serialized request (method, masked URL, id, address), the status and the time, which no
 * redaction path can reach, so it is the very line pino would write on the app logger's stream
 * (level, time, pid and hostname first, then those fields, then the message), at a third of
 * pino's cost. Installed only where the level lets info lines through.
 */
export function requestLine(
  pino: Pino,
  level: string,
  stream: DestinationStream,
  traceIdOf?: (raw: FastifyRequest["raw"]) => string | undefined,
) {
  const log = pino({ level }, stream);
  if (!log.isLevelEnabled("info")) return undefined;
  const info = log.levels.values.info;
  // `,"pid":…,"hostname":"…"`: pino's own bindings of a root logger, serialized once
  const bindings = (log as unknown as Record<symbol, string>)[pino.symbols.chindingsSym];
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const time = reply.elapsedTime;
    const traceId = traceIdOf?.(request.raw);
    stream.write(
      `{"level":${info},"time":${Date.now()}${bindings},"reqId":${JSON.stringify(request.id)}${traceId ? `,"traceId":"${traceId}"` : ""},"req":${JSON.stringify(serializeRequest(request))},"res":{"statusCode":${reply.statusCode}},"responseTime":${Number.isFinite(time) ? time : null},"msg":"request completed"}\n`,
    );
    done();
  };
}
