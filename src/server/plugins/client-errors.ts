import { maxHeaderSize, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyInstance } from "fastify";
import { PROBLEM_CONTENT_TYPE } from "../../contract/errors.js";
import { ProblemError } from "../problem-error.js";
import { problemDocument } from "./problem-replies.js";

/** What the HTTP parser or the server's timeouts refused, before any request existed. */
function toProblem(error: NodeJS.ErrnoException): ProblemError {
  if (error.code === "HPE_HEADER_OVERFLOW") {
    return new ProblemError(
      "headers_too_large",
      `The request headers are larger than this server accepts (${Math.round(maxHeaderSize / 1024)} KiB in all).`,
    );
  }
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return new ProblemError(
      "request_timeout",
      "The request did not arrive in time: its headers or its body were sent too slowly.",
    );
  }
  // HPE_INVALID_METHOD, HPE_INVALID_VERSION, HPE_INVALID_HEADER_TOKEN, … : not HTTP we can read
  return new ProblemError("validation_failed", "The request is malformed: it is not HTTP/1.1 this server can parse.");
}

/**
 * The server's `clientError`: the HTTP parser met something it cannot read (a garbage request
 * line, headers over the limit) or a request ran out of time. There is no request object and no
 * reply yet, so the answer is written on the socket by hand, as the same problem document every
 * other failure gets, and the connection is closed: the parser cannot find the next request.
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  // the peer went away (ECONNRESET) or the socket is already gone: nobody to answer
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const problem = toProblem(error);
  const requestId = crypto.randomUUID();
  this.log.debug({ err: error, requestId, status: problem.status }, "client error");
  // a socket that already wrote part of a response cannot carry another one
  if (!socket.writable || socket.bytesWritten > 0) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(problemDocument(problem, requestId));
  const head = [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? "Error"}`,
    `content-type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
    `content-length: ${Buffer.byteLength(body)}`,
    "cache-control: no-store",
    "x-content-type-options: nosniff",
    "content-security-policy: default-src 'none'; frame-ancestors 'none'",
    `x-request-id: ${requestId}`,
    "connection: close",
  ].join("\r\n");
  // end() flushes the answer first; destroy() then frees the socket even if the peer never closes
  socket.end(`${head}\r\n\r\n${body}`, () => socket.destroy());
}
