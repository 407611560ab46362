import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type ErrorCode, PROBLEM_CONTENT_TYPE, type ProblemDocument, TITLES } from "../../contract/errors.js";
import { SCIM_URN } from "../../contract/scim.js";
import { ProblemError } from "../problem-error.js";
import { isDatabaseUnavailable, isUnstorableText } from "../store/errors.js";
import { type AjvIssue, fieldIssues } from "../validation-issues.js";
import { allowedMethods } from "./allowed-methods.js";
import { followsScim, isScimWire, SCIM_CONTENT_TYPE } from "./scim-wire.js";

/** The RFC 9457 body of a problem, as every answer of the server (and of its HTTP layer) carries it. */
export function problemDocument(problem: ProblemError, requestId: string): ProblemDocument {
  return {
    type: `urn:bizctl:problem:${problem.code}`,
    title: TITLES[problem.code],
    status: problem.status,
    detail: problem.detail,
    code: problem.code,
    requestId,
    ...(problem.errors && { errors: problem.errors }),
    ...(problem.extra.scimType && { scimType: problem.extra.scimType }),
    ...(problem.extra.checks && { checks: problem.extra.checks }),
  };
}

/**
 * The same problem as a SCIM error (RFC 7644 section 3.12), as the SCIM endpoints answer: its
 * `status` a string, its `scimType` and `detail`, and the problem's other members kept beside
 * them, so that a client of either kind reads it (`code` and `title` above all).
 */
export function scimErrorDocument(problem: ProblemError, requestId: string) {
  const { status, scimType, detail, ...members } = problemDocument(problem, requestId);
  return { schemas: [SCIM_URN.error], status: String(status), ...(scimType && { scimType }), detail, ...members };
}

export function sendProblem(
  reply: FastifyReply,
  request: FastifyRequest,
  problem: ProblemError,
  scim = isScimWire(request),
): FastifyReply {
  for (const [name, value] of Object.entries(problem.extra.headers ?? {})) reply.header(name, value);
  if (scim) {
    const body = scimErrorDocument(problem, String(request.id));
    return reply.status(problem.status).type(SCIM_CONTENT_TYPE).send(JSON.stringify(body));
  }
  const body = problemDocument(problem, String(request.id));
  return reply.status(problem.status).type(`${PROBLEM_CONTENT_TYPE}; charset=utf-8`).send(JSON.stringify(body));
}

const BY_FASTIFY_CODE: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: ["payload_too_large", "The request body is larger than this server accepts."],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ["unsupported_media_type", "Send the body as application/json."],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ["validation_failed", "Content-Length does not match the body."],
  FST_ERR_CTP_EMPTY_JSON_BODY: ["validation_failed", "The JSON body is empty."],
  FST_ERR_CTP_INVALID_JSON_BODY: ["validation_failed", "The body is not valid JSON."],
};

const unsupportedMediaType = () => new ProblemError(...BY_FASTIFY_CODE.FST_ERR_CTP_INVALID_MEDIA_TYPE!);

/** What SCIM calls a body that is not JSON (RFC 7644 section 3.12). */
const SYNTAX_ERRORS = new Set(["FST_ERR_CTP_EMPTY_JSON_BODY", "FST_ERR_CTP_INVALID_JSON_BODY"]);

/** The part of the request a validation failed on, for messages that quote its value. */
function validatedInput(request: FastifyRequest, context: string | undefined): unknown {
  if (context === "body") return request.body;
  if (context === "querystring") return request.query;
  if (context === "params") return request.params;
  return undefined;
}

function toProblem(
  error: FastifyError & { validationContext?: string },
  scim: boolean,
  request: FastifyRequest,
): ProblemError | undefined {
  if (error instanceof ProblemError) return error;
  if (error.validation) {
    const input = validatedInput(request, error.validationContext);
    const errors = fieldIssues(error.validationContext, error.validation as unknown as AjvIssue[], input);
    const detail = errors.map((e) => `${e.path}: ${e.message}`).join("; ");
    // the resources area answers in SCIM's terms too (RFC 7644 section 3.12)
    return new ProblemError("validation_failed", `The request is not valid: ${detail}`, {
      errors,
      ...(scim && { scimType: "invalidValue" }),
    });
  }
  if (isUnstorableText(error)) {
    return new ProblemError("validation_failed", "The database cannot store the NUL character (U+0000) in text.", {
      ...(scim && { scimType: "invalidValue" }),
    });
  }
  if (isDatabaseUnavailable(error)) {
    return new ProblemError("service_unavailable", "The database cannot be reached right now; retry shortly.", {
      headers: { "retry-after": "5" },
    });
  }
  const known = BY_FASTIFY_CODE[error.code];
  if (known) {
    const syntax = scim && SYNTAX_ERRORS.has(error.code);
    return new ProblemError(known[0], known[1], { ...(syntax && { scimType: "invalidSyntax" }) });
  }
  const status = error.statusCode ?? 500;
  if (status === 429) return new ProblemError("rate_limited", "Too many requests; slow down.", { status });
  if (status >= 400 && status < 500) return new ProblemError("validation_failed", error.message, { status });
  return undefined;
}

/** Every failure leaves as an RFC 9457 problem document (a SCIM error on a SCIM endpoint); nothing leaks a stack trace. */
export function installProblemHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // a path no route serves is 404 (or 405) whatever its body: the body (of a type nothing
    // parses, too large, malformed) is read before the not-found handler runs, but nothing would
    // ever use it. OPTIONS on a routed path is the exception: its answer is the route's own,
    // which reads the body as any route does and refuses what it cannot parse.
    if (request.is404 && (request.method !== "OPTIONS" || !allowedMethods(request))) {
      return sendNotFound(request, reply);
    }
    const problem = toProblem(error, followsScim(request), request);
    if (problem) return sendProblem(reply, request, problem);
    request.log.error({ err: error }, "unhandled error");
    return sendProblem(
      reply,
      request,
      new ProblemError("internal_error", "The server failed; the request id identifies it in the logs."),
    );
  });
  app.setNotFoundHandler(sendNotFound);
}

/**
 * Whether a request carries a body that no content-type parser reads: a route refuses it with 415,
 * but Fastify hands it on to the not-found handler unread.
 */
function unreadableBody(request: FastifyRequest): boolean {
  const type = request.headers["content-type"];
  if (type !== undefined) return !request.server.hasContentTypeParser(type.split(";")[0]!.trim().toLowerCase());
  const length = request.headers["content-length"];
  return request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/** The answer to a request no route serves: 405, or OPTIONS' 204, where routes serve its path with other methods; else 404. */
export function sendNotFound(request: FastifyRequest, reply: FastifyReply) {
  const allow = allowedMethods(request);
  if (allow && request.method === "OPTIONS") {
    // OPTIONS reads a body as a route does
    if (unreadableBody(request)) return sendProblem(reply, request, unsupportedMediaType());
    return reply.status(204).header("allow", allow).send();
  }
  if (allow) {
    return sendProblem(
      reply,
      request,
      new ProblemError("method_not_allowed", `${request.method} is not allowed here; use ${allow}.`, {
        headers: { allow },
      }),
    );
  }
  return sendProblem(
    reply,
    request,
    new ProblemError("not_found", `No route for ${request.method} ${request.url.split("?")[0]}.`),
  );
}
