import { Type } from "@sinclair/typebox";

/** Stable error codes that clients branch on (spec section 1). */
export const ERROR_CODES = [
  "validation_failed",
  "invalid_credentials",
  "token_missing",
  "token_invalid",
  "token_expired",
  "token_revoked",
  "password_change_required",
  "mfa_enrollment_required",
  "weak_password",
  "forbidden",
  "service_account",
  "not_found",
  "conflict",
  "precondition_failed",
  "last_admin",
  "quota_exceeded",
  "rate_limited",
  "account_locked",
  "invalid_filter",
  "invalid_reset_token",
  "mfa_required",
  "invalid_otp",
  "oauth_parameter_absent",
  "oauth_signature_invalid",
  "oauth_nonce_reused",
  "oauth_timestamp_refused",
  "oauth_token_invalid",
  "oauth_verifier_invalid",
  "oauth_callback_rejected",
  "payload_too_large",
  "headers_too_large",
  "request_timeout",
  "unsupported_media_type",
  "method_not_allowed",
  "service_unavailable",
  "internal_error",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * The HTTP status each code answers with: read by the server when it throws one and by the
 * OpenAPI document when it lists an operation's error responses, so the two cannot differ.
 */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
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
  mfa_required: 401,
  invalid_otp: 401,
  oauth_signature_invalid: 401,
  oauth_nonce_reused: 401,
  oauth_timestamp_refused: 401,
  oauth_token_invalid: 401,
  oauth_verifier_invalid: 401,
  password_change_required: 403,
  mfa_enrollment_required: 403,
  forbidden: 403,
  service_account: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  last_admin: 409,
  quota_exceeded: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  account_locked: 429,
  headers_too_large: 431,
  internal_error: 500,
  service_unavailable: 503,
};

export const PROBLEM_CONTENT_TYPE = "application/problem+json";
export const PROBLEM_TYPE_BASE = "https://bizctl.dev/problems/";

export const FieldError = Type.Object({
  path: Type.String({ description: "JSON pointer of the offending value" }),
  message: Type.String(),
});

/** RFC 9457 problem document with the extension members every bizctl error carries. */
export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    requestId: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(FieldError)),
    scimType: Type.Optional(Type.String()),
    checks: Type.Optional(
      Type.Record(Type.String(), Type.String(), { description: "on 503 from /ready: the state of each dependency" }),
    ),
  },
  { $id: "Problem" },
);

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId?: string;
  errors?: { path: string; message: string }[];
  scimType?: string;
  /** on 503 from /ready: the state of each dependency, e.g. `{database: "ok", redis: "down"}` */
  checks?: Record<string, string>;
}

export const TITLES: Record<ErrorCode, string> = {
  validation_failed: "The request is not valid",
  invalid_credentials: "Invalid credentials",
  token_missing: "Authentication required",
  token_invalid: "The token is not valid",
  token_expired: "The token has expired",
  token_revoked: "The token has been revoked",
  password_change_required: "Password change required",
  mfa_enrollment_required: "A second factor must be enrolled first",
  weak_password: "The password does not meet the policy",
  forbidden: "Forbidden",
  service_account: "A service account has no password and does not log in",
  not_found: "Not found",
  conflict: "Conflict",
  precondition_failed: "Precondition failed",
  last_admin: "The last active admin must remain",
  quota_exceeded: "A quota is exhausted",
  rate_limited: "Too many requests",
  account_locked: "Account temporarily locked",
  invalid_filter: "The filter is not valid",
  invalid_reset_token: "The reset token is not valid",
  mfa_required: "A second factor is required",
  invalid_otp: "The one-time code is not valid",
  oauth_parameter_absent: "An OAuth parameter is missing",
  oauth_signature_invalid: "The OAuth signature is not valid",
  oauth_nonce_reused: "The OAuth nonce was already used",
  oauth_timestamp_refused: "The OAuth timestamp is out of range",
  oauth_token_invalid: "The OAuth token is not valid",
  oauth_verifier_invalid: "The OAuth verifier is not valid",
  oauth_callback_rejected: "The OAuth callback is not registered for the consumer",
  payload_too_large: "Payload too large",
  headers_too_large: "Request headers too large",
  request_timeout: "Request timeout",
  unsupported_media_type: "Unsupported media type",
  method_not_allowed: "Method not allowed",
  service_unavailable: "Service unavailable",
  internal_error: "Internal server error",
};
