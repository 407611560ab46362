/**
 * A deployment that cannot start as configured (a missing or wrong secret, say). Raised while the
 * app is built, never during a request, so that a bad configuration fails at start.
 */
export class ConfigurationError extends Error {
  override readonly name = "ConfigurationError";
}

/**
 * A data dir or database that `server init` never prepared: no SQLite file, or no user in it.
 * Serving it would only answer "wrong password" to every login; refused before anything is
 * created in it.
 */
export class NotInitialisedError extends Error {
  override readonly name = "NotInitialisedError";
}
