import type { Context } from "../cli/command-context.js";
import { CliError, EXIT, UsageError } from "../cli/errors.js";
import { ApiError } from "../client/errors.js";
import { API_TOKEN_DEFAULT_DAYS, API_TOKEN_MAX_DAYS, API_TOKEN_PREFIX } from "../contract/api-tokens.js";
import { API_TOKEN_SCOPES, type ApiTokenScope } from "../contract/route.js";

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

/**
 * The token a person names among `tokens` (those not revoked): its id, or its name as the token
 * list shows it. Names are not unique, so a name two tokens share asks for the id (exit 2).
 */
export function tokenNamed<T extends { id: string; name: string }>(
  tokens: readonly T[],
  reference: string,
  whose: string,
): T {
  const byId = tokens.find((token) => token.id === reference);
  if (byId) return byId;
  const named = tokens.filter((token) => token.name === reference);
  if (named.length === 1) return named[0]!;
  if (named.length === 0) {
    throw new CliError(
      `${whose} no API token '${reference}' (looked up by id and name among those not revoked).`,
      EXIT.notFound,
      "not_found",
    );
  }
  throw new UsageError(
    `${named.length} API tokens are named '${reference}': ${named.map((token) => token.id).join(", ")}.`,
    "name the token by its id",
  );
}

/**
 * `--expires 30d`: whole days only, as the server counts them, from 1 to 366. Any other unit, or
 * a longer expiry, exits 2 before a request: the server would refuse it as a body field the
 * person never typed.
 */
export function expiryDays(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^([0-9]{1,4})d$/.exec(value.trim());
  const days = match ? Number(match[1]) : Number.NaN;
  if (!(days >= 1 && days <= API_TOKEN_MAX_DAYS)) {
    throw new UsageError(
      `--expires takes a number of days from 1 to ${API_TOKEN_MAX_DAYS} followed by d (30d, 90d, 366d); got '${value}'.`,
      `leave it out for ${API_TOKEN_DEFAULT_DAYS} days`,
    );
  }
  return days;
}

/** The scopes named with `--scope`, checked here so that a typo says which names there are (exit 2). */
export function scopesOf(given: string[] | undefined): ApiTokenScope[] | undefined {
  if (!given?.length) return undefined;
  const known = API_TOKEN_SCOPES as readonly string[];
  const unknown = given.filter((scope) => !known.includes(scope));
  if (unknown.length) {
    throw new UsageError(
      `Unknown scope${unknown.length > 1 ? "s" : ""} ${unknown.map((s) => `'${s}'`).join(", ")}.`,
      `scopes: ${API_TOKEN_SCOPES.join(", ")} (--scope once for each; none gives them all)`,
    );
  }
  return [...new Set(given)] as ApiTokenScope[];
}

/** A person at a terminal gets the token alone on stdout; a script or --json, the created record. */
export const forPerson = (ctx: Context) => Boolean(ctx.io.stdout.isTTY) && !ctx.globals.json && !ctx.globals.output;
