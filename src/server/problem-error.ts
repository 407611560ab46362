import { ERROR_STATUS, type ErrorCode } from "../contract/errors.js";

export interface FieldIssue {
  path: string;
  message: string;
}

/** A failure the server answers with a problem document; thrown by services, rendered by the error plugin. */
export class ProblemError extends Error {
  readonly status: number;
  readonly errors?: FieldIssue[];
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: {
      status?: number;
      errors?: FieldIssue[];
      headers?: Record<string, string>;
      scimType?: string;
      /** `/ready`: the state of each dependency */
      checks?: Record<string, string>;
    } = {},
  ) {
    super(detail);
    this.name = "ProblemError";
    this.errors = extra.errors;
    this.status = extra.status ?? ERROR_STATUS[code];
  }
}

/** 400 validation_failed about one value; `scimType` for the resources area (RFC 7644 section 3.12). */
export function invalid(detail: string, path?: string, scimType?: string): ProblemError {
  return new ProblemError("validation_failed", detail, {
    ...(path && { errors: [{ path, message: detail }] }),
    ...(scimType && { scimType }),
  });
}
