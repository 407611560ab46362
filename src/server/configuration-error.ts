/**
 * A deployment that cannot start as configured (a missing or wrong secret, say). Raised while the
 * app is built, never during a request, so that a bad configuration fails at start.
 */
export class ConfigurationError extends Error {
  override readonly name = "ConfigurationError";
}
