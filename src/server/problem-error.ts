import type { ErrorCode } from "../contract/errors.js";

const DEFAULT_STATUS: Partial<Record<ErrorCode, number>> = {
  validation_failed: 400,
  weak_password: 400,
  invalid_filter: 400,
  invalid_reset_token: 400,
  oauth_parameter_absent: 400,
  oauth_callback_rejected: 400,
  invalid_credentials: 401,
  token_missing: 401,
  token_invalid: 401,
  token_expired: 401,
  token_revoked: 401,
  oauth_signature_invalid: 401,
  oauth_nonce_reused: 401,
  oauth_timestamp_refused: 401,
  oauth_token_invalid: 401,
  oauth_verifier_invalid: 401,
  password_change_required: 403,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  last_admin: 409,
  quota_exceeded: 409,
  request_timeout: 408,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limited: 429,
  account_locked: 429,
  service_unavailable: 503,
  internal_error: 500,
};

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
    this.status = extra.status ?? DEFAULT_STATUS[code] ?? 400;
  }
}

/** 400 validation_failed about one value; `scimType` for the resources area (RFC 7644 section 3.12). */
export function invalid(detail: string, path?: string, scimType?: string): ProblemError {
  return new ProblemError("validation_failed", detail, {
    ...(path && { errors: [{ path, message: detail }] }),
    ...(scimType && { scimType }),
  });
}
