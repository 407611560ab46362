import type { ProblemDocument } from "../contract/errors.js";

/** The server answered with a problem document (or another non-2xx answer). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: ProblemDocument,
    /** seconds, from the answer's Retry-After (a rate limit or a back-off) */
    readonly retryAfterSeconds?: number,
  ) {
    super(problem.detail || problem.title);
    this.name = "ApiError";
  }
}

/** The server could not be reached, or the connection broke. */
export class NetworkError extends Error {
  constructor(
    message: string,
    readonly target: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = "NetworkError";
  }
}
