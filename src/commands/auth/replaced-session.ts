import type { Context } from "../../cli/command-context.js";
import { writeLine } from "../../cli/io.js";
import type { StoredToken } from "../../config/profiles.js";
import { API_TOKEN_PREFIX } from "../../contract/api-tokens.js";
import { endSession } from "../session-end.js";

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
