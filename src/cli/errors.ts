import { ApiError, NetworkError } from "../client/errors.js";
import { ProfilesLockedError } from "../config/profiles.js";
import type { ErrorCode } from "../contract/errors.js";

export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
  unauthenticated: 4,
  forbidden: 5,
  conflict: 6,
  validation: 7,
  unavailable: 8,
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** What each exit code means: `help exit-codes` prints it, and a test holds the README's table to it. */
export const EXIT_MEANINGS: Readonly<Record<keyof typeof EXIT, string>> = {
  ok: "success",
  failure: "other failure (including rate limiting)",
  usage: "usage error or missing input",
  notFound: "not found",
  unauthenticated: "not authenticated: no, expired or revoked token; bad credentials",
  forbidden:
    "forbidden (including a pending password change, or a second factor the server requires and the account has not enrolled)",
  conflict: "conflict or precondition failed",
  validation: "validation failed",
  unavailable: "server unreachable or 5xx",
  interrupted: "interrupted",
};

/** A failure the CLI reports itself, with its exit code and what to do next. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly code: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, EXIT.usage, "usage", hint);
  }
}

export class AuthError extends CliError {
  constructor(message: string, hint = "run 'bizctl auth login'") {
    super(message, EXIT.unauthenticated, "not_authenticated", hint);
  }
}

/**
 * The exit code of each problem code of the contract: a Record over ErrorCode, so that a code
 * added to the contract does not compile until it is given one. A code this CLI does not know
 * (a newer server's) exits 1, or 8 when its status is 5xx.
 */
export const BY_PROBLEM_CODE: Readonly<Record<ErrorCode, ExitCode>> = {
  not_found: EXIT.notFound,
  invalid_credentials: EXIT.unauthenticated,
  token_missing: EXIT.unauthenticated,
  token_invalid: EXIT.unauthenticated,
  token_expired: EXIT.unauthenticated,
  token_revoked: EXIT.unauthenticated,
  account_locked: EXIT.unauthenticated,
  mfa_required: EXIT.unauthenticated,
  invalid_otp: EXIT.unauthenticated,
  invalid_reset_token: EXIT.validation,
  oauth_signature_invalid: EXIT.unauthenticated,
  oauth_token_invalid: EXIT.unauthenticated,
  oauth_verifier_invalid: EXIT.unauthenticated,
  oauth_nonce_reused: EXIT.unauthenticated,
  oauth_timestamp_refused: EXIT.unauthenticated,
  forbidden: EXIT.forbidden,
  service_account: EXIT.forbidden,
  password_change_required: EXIT.forbidden,
  mfa_enrollment_required: EXIT.forbidden,
  conflict: EXIT.conflict,
  precondition_failed: EXIT.conflict,
  last_admin: EXIT.conflict,
  quota_exceeded: EXIT.conflict,
  validation_failed: EXIT.validation,
  weak_password: EXIT.validation,
  invalid_filter: EXIT.validation,
  payload_too_large: EXIT.validation,
  headers_too_large: EXIT.validation,
  unsupported_media_type: EXIT.validation,
  oauth_parameter_absent: EXIT.validation,
  oauth_callback_rejected: EXIT.validation,
  rate_limited: EXIT.failure,
  request_timeout: EXIT.failure,
  method_not_allowed: EXIT.failure,
  service_unavailable: EXIT.unavailable,
  internal_error: EXIT.unavailable,
};

const HINTS: Record<string, string> = {
  token_missing: "run 'bizctl auth login'",
  token_invalid: "run 'bizctl auth login'",
  token_expired: "your session expired; run 'bizctl auth login' again",
  token_revoked: "your session ended; run 'bizctl auth login' again",
  invalid_credentials: "check the user name and password",
  mfa_required: "give the code of your authenticator app (or a recovery code) after the password",
  invalid_otp: "use the app's current code (each works once), or a recovery code",
  password_change_required: "run 'bizctl auth change-password'",
  mfa_enrollment_required: "run 'bizctl auth mfa enroll'",
  precondition_failed: "someone changed it meanwhile; read it again and retry",
  rate_limited: "wait a little and retry",
  account_locked: "wait until the lock ends, or ask an admin",
  last_admin: "make another user an admin first ('bizctl users create --role admin')",
};

/** Hints a command gives for a problem where the code alone would mislead (ApiError.hint). */
const COMMAND_HINTS = new WeakMap<ApiError, string>();

/**
 * Awaits a call; a problem of `code` it fails with gets this command's `hint` in place of the
 * code's (a wrong current password is not a wrong user name).
 */
export async function withHint<T>(call: Promise<T>, code: string, hint: string): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof ApiError && error.problem.code === code) COMMAND_HINTS.set(error, hint);
    throw error;
  }
}

/** A problem raised in-process by the server code the `server` commands run (same codes as over HTTP). */
function asLocalProblem(error: unknown): ApiError | undefined {
  const e = error as { name?: unknown; code?: unknown; status?: unknown; detail?: unknown };
  if (e?.name !== "ProblemError" || typeof e.code !== "string" || typeof e.status !== "number") return undefined;
  const detail = String(e.detail);
  return new ApiError(e.status, { type: "about:blank", title: detail, status: e.status, detail, code: e.code });
}

/** A deployment the server code refused to start as configured (a missing or wrong secret key). */
function asConfigurationError(error: unknown): CliError | undefined {
  const e = error as { name?: unknown; message?: unknown };
  if (e?.name !== "ConfigurationError") return undefined;
  return new CliError(String(e.message), EXIT.usage, "configuration_error");
}

/** The profile file stayed locked by another bizctl (the config module's own error). */
function asProfilesLocked(error: unknown): CliError | undefined {
  if (!(error instanceof ProfilesLockedError)) return undefined;
  return new CliError(
    error.message,
    EXIT.conflict,
    "profiles_locked",
    "try again; a lock whose process died is taken over after 5 seconds",
  );
}

/**
 * A data dir or database that `server init` never prepared (the server code's NotInitialisedError),
 * with what to run; the embedded CLI gives a hint that names its own data dir.
 */
export function asNotInitialised(
  error: unknown,
  hint = "run 'bizctl server init' first, with the same --data-dir or --database",
): CliError | undefined {
  const e = error as { name?: unknown; message?: unknown };
  if (e?.name !== "NotInitialisedError") return undefined;
  return new CliError(String(e.message), EXIT.usage, "not_initialised", hint);
}

export function exitCodeFor(error: unknown): number {
  const local =
    asLocalProblem(error) ?? asConfigurationError(error) ?? asNotInitialised(error) ?? asProfilesLocked(error);
  if (local) return exitCodeFor(local);
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof NetworkError) return EXIT.unavailable;
  if (error instanceof ApiError) {
    if (error.status >= 500) return EXIT.unavailable;
    const code = error.problem.code;
    return Object.hasOwn(BY_PROBLEM_CODE, code) ? BY_PROBLEM_CODE[code as ErrorCode] : EXIT.failure;
  }
  return EXIT.failure;
}

export interface ErrorReport {
  code: string;
  status?: number;
  message: string;
  requestId?: string;
  hint?: string;
  errors?: { path: string; message: string }[];
  /** what the command said before it failed, when stderr is not a terminal (see Context.info) */
  messages?: string[];
}

const SAID_BEFORE = new WeakMap<object, string[]>();

/** Keeps with a failure what its command said before it, for the one JSON object that reports it. */
export function saidBefore<E>(error: E, messages: string[]): E {
  if (messages.length > 0 && typeof error === "object" && error !== null) SAID_BEFORE.set(error, messages);
  return error;
}

/** What a failure's command said before it (saidBefore), if anything. */
export function messagesBefore(error: unknown): string[] | undefined {
  return typeof error === "object" && error !== null ? SAID_BEFORE.get(error) : undefined;
}

export function describeError(error: unknown): ErrorReport {
  const local = asLocalProblem(error);
  if (local) return { ...describeError(local), status: undefined };
  const configuration = asConfigurationError(error) ?? asNotInitialised(error) ?? asProfilesLocked(error);
  if (configuration) return describeError(configuration);
  if (error instanceof ApiError) {
    const wait = error.problem.code === "rate_limited" ? error.retryAfterSeconds : undefined;
    return {
      code: error.problem.code,
      status: error.status,
      message: `${error.problem.detail || error.problem.title}${wait !== undefined ? ` Retry in ${wait} s.` : ""}`,
      ...(error.problem.requestId && { requestId: error.problem.requestId }),
      ...((COMMAND_HINTS.has(error) || HINTS[error.problem.code] || error.status >= 500) && {
        hint:
          COMMAND_HINTS.get(error) ?? HINTS[error.problem.code] ?? "the server failed; retry later or check its logs",
      }),
      ...(error.problem.errors && { errors: error.problem.errors }),
    };
  }
  if (error instanceof NetworkError) {
    return {
      code: "server_unreachable",
      message: error.message,
      hint: "check the profile's server URL ('bizctl profile show')",
    };
  }
  if (error instanceof CliError) {
    return { code: error.code, message: error.message, ...(error.hint && { hint: error.hint }) };
  }
  return { code: "internal_error", message: error instanceof Error ? error.message : String(error) };
}
