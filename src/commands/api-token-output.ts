import type { Context } from "../cli/command-context.js";
import { CliError, EXIT } from "../cli/errors.js";
import { ApiError } from "../client/errors.js";
import { API_TOKEN_PREFIX } from "../contract/api-tokens.js";

/** The columns of an API token table: `auth tokens list` and `users tokens` show the same ones. */
export const API_TOKEN_COLUMNS = ["id", "name", "scopes", "createdAt", "expiresAt", "lastUsedAt", "lastUsedIp"];

/** Whether the credential this command sends is an API token (told by its prefix, as the server does). */
export const sendsApiToken = (ctx: Context): boolean => ctx.credential()?.token.startsWith(API_TOKEN_PREFIX) === true;

/**
 * The server's 403 to an API token on an operation that manages accounts, said for the command
 * line: which credential was sent and what to use instead (exit 5 still). Anything else as it was.
 */
function explainTokenRefusal(ctx: Context, error: unknown): unknown {
  if (!(error instanceof ApiError && error.problem.code === "forbidden" && sendsApiToken(ctx))) return error;
  const source =
    ctx.credential()?.source === "BIZCTL_TOKEN" ? "BIZCTL_TOKEN holds" : `profile '${ctx.profileName}' holds`;
  return new CliError(
    `${source} an API token, and an API token cannot manage API tokens (create, list or revoke them): that needs a user's own login.`,
    EXIT.forbidden,
    "forbidden",
    ctx.credential()?.source === "BIZCTL_TOKEN"
      ? "unset BIZCTL_TOKEN and use a profile logged in with 'bizctl auth login --user NAME'"
      : "log in with a password: 'bizctl auth login --user NAME'",
  );
}

/** Awaits a call that manages API tokens, with an API token's refusal explained as above. */
export async function managingTokens<T>(ctx: Context, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    throw explainTokenRefusal(ctx, error);
  }
}
