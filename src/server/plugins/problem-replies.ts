import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type ErrorCode, PROBLEM_CONTENT_TYPE, type ProblemDocument, TITLES } from "../../contract/errors.js";
import { RESOURCES_PATH } from "../../contract/resources.js";
import { ProblemError } from "../problem-error.js";
import { isDatabaseUnavailable, isUnstorableText } from "../store/errors.js";
import { type AjvIssue, fieldIssues } from "../validation-issues.js";

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

export function sendProblem(reply: FastifyReply, request: FastifyRequest, problem: ProblemError): FastifyReply {
  const body = problemDocument(problem, String(request.id));
  for (const [name, value] of Object.entries(problem.extra.headers ?? {})) reply.header(name, value);
  return reply.status(problem.status).type(`${PROBLEM_CONTENT_TYPE}; charset=utf-8`).send(JSON.stringify(body));
}

const BY_FASTIFY_CODE: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: ["payload_too_large", "The request body is larger than this server accepts."],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ["unsupported_media_type", "Send the body as application/json."],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ["validation_failed", "Content-Length does not match the body."],
  FST_ERR_CTP_EMPTY_JSON_BODY: ["validation_failed", "The JSON body is empty."],
  FST_ERR_CTP_INVALID_JSON_BODY: ["validation_failed", "The body is not valid JSON."],
};

function toProblem(error: FastifyError & { validationContext?: string }, scim: boolean): ProblemError | undefined {
  if (error instanceof ProblemError) return error;
  if (error.validation) {
    const errors = fieldIssues(error.validationContext, error.validation as unknown as AjvIssue[]);
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
  if (known) return new ProblemError(known[0], known[1]);
  const status = error.statusCode ?? 500;
  if (status === 429) return new ProblemError("rate_limited", "Too many requests; slow down.", { status });
  if (status >= 400 && status < 500) return new ProblemError("validation_failed", error.message, { status });
  return undefined;
}

/** Every failure leaves as an RFC 9457 problem document; nothing leaks a stack trace. */
export function installProblemHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = toProblem(error, request.routeOptions.url?.startsWith(RESOURCES_PATH) === true);
    if (problem) return sendProblem(reply, request, problem);
    request.log.error({ err: error }, "unhandled error");
    return sendProblem(
      reply,
      request,
      new ProblemError("internal_error", "The server failed; the request id identifies it in the logs."),
    );
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      request,
      new ProblemError("not_found", `No route for ${request.method} ${request.url.split("?")[0]}.`),
    ),
  );
}
