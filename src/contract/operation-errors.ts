import { ERROR_STATUS, type ErrorCode } from "./errors.js";
import { ROLES, type RouteEntry } from "./route.js";

/** What the server adds to an operation beyond its contract entry, and that decides further errors. */
export interface OperationFacts {
  /** a per-client rate limit runs before the operation (429 `rate_limited`) */
  rateLimited?: boolean;
}

/** Refusals of a credential: a Bearer token's, and an OAuth-signed request's (RFC 5849 section 3.2). */
const CREDENTIAL_REFUSALS: readonly ErrorCode[] = [
  "token_missing",
  "token_invalid",
  "token_expired",
  "token_revoked",
  "oauth_parameter_absent",
  "oauth_signature_invalid",
  "oauth_nonce_reused",
  "oauth_timestamp_refused",
  "oauth_token_invalid",
  // a malformed signed request (a repeated or an unknown-version parameter)
  "validation_failed",
];

/** A replacement or a deletion of something with an ETag takes If-Match; a read or a creation does not. */
export function honoursIfMatch(entry: RouteEntry): boolean {
  return entry.etag === true && entry.method !== "GET" && entry.method !== "POST";
}

/**
 * Every problem code an operation can answer with, derived from what decides them: the access
 * rule (the gate that refuses a credential, a role, a temporary password, a delegated one or an
 * API token's scopes), the schemas (validation; a `filter` parameter), the method (a body, its
 * size and media type), a path parameter (what it names may not exist), `etag` (If-Match), the
 * rate limit, and the codes the entry declares itself.
 * The OpenAPI document lists these per status (ERROR_STATUS), so the two read one table.
 */
export function operationErrors(entry: RouteEntry, facts: OperationFacts = {}): ErrorCode[] {
  const codes = new Set<ErrorCode>();
  const access = entry.access;
  if (!access.public) {
    for (const code of CREDENTIAL_REFUSALS) codes.add(code);
    if (!access.duringFirstLogin) codes.add("password_change_required");
    if (!access.duringMfaEnrollment) codes.add("mfa_enrollment_required");
    // an API token is refused what its scopes do not cover, and whatever no scope covers
    const everyToken = access.scope === "any" && !access.managesAccount;
    if (!everyToken || ROLES.some((role) => !access.roles.includes(role))) codes.add("forbidden");
    // the credential is looked up in the store
    codes.add("service_unavailable");
  }
  if (entry.params || entry.query || entry.body) codes.add("validation_failed");
  // a SCIM filter in the query can be refused for what it says
  if (entry.query && "filter" in ((entry.query as { properties?: object }).properties ?? {})) {
    codes.add("invalid_filter");
  }
  // the server reads the body of any request but a GET, declared or not: its size, its media
  // type and its syntax can be refused
  if (entry.method !== "GET") {
    codes.add("validation_failed");
    codes.add("payload_too_large");
    codes.add("unsupported_media_type");
  }
  if (entry.params) codes.add("not_found");
  if (honoursIfMatch(entry)) codes.add("precondition_failed");
  if (facts.rateLimited) codes.add("rate_limited");
  for (const code of entry.errors ?? []) codes.add(code);
  codes.add("internal_error");
  return [...codes];
}

/** The codes of `operationErrors` by HTTP status, in order of status. */
export function errorsByStatus(codes: readonly ErrorCode[]): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}
