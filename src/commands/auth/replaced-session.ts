import type { Context } from "../../cli/command-context.js";
import { describeError } from "../../cli/errors.js";
import { writeLine } from "../../cli/io.js";
import type { ApiClient } from "../../client/client.js";
import { ApiError } from "../../client/errors.js";
import type { StoredToken } from "../../config/profiles.js";
import { API_TOKEN_PREFIX } from "../../contract/api-tokens.js";
import * as auth from "../../contract/auth.js";

/** What became of a token's session on the server: ended, or why it may still be live. */
export type SessionEnd = { ended: true } | { ended: false; why: string };

/**
 * Ends on its server the session of a token this machine forgets (an API token is revoked),
 * best effort: a 401 means it had ended already; anything else (the server unreachable) is
 * answered, for the caller to say that the session may still be live.
 */
export async function endSession(client: ApiClient, token: string): Promise<SessionEnd> {
  try {
    await client.call(auth.logout, { headers: { authorization: `Bearer ${token}` } });
    return { ended: true };
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return { ended: true };
    return { ended: false, why: describeError(error).message };
  }
}

/**
 * After a login stored a new token in the profile: ends the session of the token it replaced,
 * which nothing on this machine can reach any more. An API token kept before is left alone:
 * scripts may hold copies of it ('auth tokens revoke' ends it), and an expired session has
 * ended already.
 */
export async function endReplacedSession(ctx: Context, replaced: StoredToken | undefined, newToken: string) {
  if (!replaced || replaced.token === newToken || replaced.token.startsWith(API_TOKEN_PREFIX)) return;
  if (Date.parse(replaced.expiresAt) <= Date.now()) return;
  const result = await endSession(await ctx.client(), replaced.token);
  if (result.ended) {
    ctx.info(`Ended the session this login replaces (profile '${ctx.profileName}').`);
    return;
  }
  writeLine(
    ctx.io,
    `warning: the session this login replaces was not ended on the server (${result.why}); it may still be live until ${replaced.expiresAt}.`,
  );
}
