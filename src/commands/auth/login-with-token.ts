import type { Context } from "../../cli/command-context.js";
import { CliError, EXIT, UsageError } from "../../cli/errors.js";
import { stdinLine } from "../../cli/io.js";
import type { CallResult } from "../../client/client.js";
import { ApiError } from "../../client/errors.js";
import { API_TOKEN_PREFIX } from "../../contract/api-tokens.js";
import * as auth from "../../contract/auth.js";
import { printLoginResult } from "./login-result.js";
import { endReplacedSession } from "./replaced-session.js";

/**
 * `auth login --with-token`, as gh's: an API token from the first line of stdin, checked with the
 * server (GET /auth/isLogged with it) and only then kept in the profile, where a login's JWT goes.
 * A refused token leaves the profile as it was.
 */
export async function loginWithToken(ctx: Context): Promise<void> {
  ctx.refuseServerOverride("auth login --with-token");
  if (ctx.io.stdin.isTTY) {
    ctx.info("Paste the API token, then press Enter and Ctrl-D.");
    // a person is asked: the question cannot wait for the end
    ctx.sayHeldMessages();
  }
  const token = (await stdinLine(ctx.io, 0))?.trim();
  if (!token) {
    throw new UsageError(
      "--with-token reads the API token from stdin, and stdin is empty.",
      "pipe it in: bizctl auth login --with-token < token.txt",
    );
  }
  if (!token.startsWith(API_TOKEN_PREFIX)) {
    throw new UsageError(
      `That is not an API token: they begin with ${API_TOKEN_PREFIX}.`,
      "create one with 'bizctl auth tokens create --name NAME'; a password login is 'bizctl auth login --user NAME'",
    );
  }
  const client = await ctx.client();
  let data: CallResult<typeof auth.isLogged>["data"];
  try {
    ({ data } = await client.call(auth.isLogged, { headers: { authorization: `Bearer ${token}` } }));
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) throw error;
    throw new CliError(
      `The server refused this API token (${error.problem.detail || error.problem.title}); nothing was stored.`,
      EXIT.unauthenticated,
      error.problem.code,
      "check that it was copied whole, or create a new one with 'bizctl auth tokens create'",
    );
  }
  const replaced = ctx.profile.auth;
  await ctx.profiles.save(ctx.profileName, {
    ...ctx.profile,
    auth: { token, expiresAt: data.expiresAt, user: data.user },
  });
  const credential = data.credential;
  const which = credential?.name ? `API token '${credential.name}'` : "an API token";
  const scopes = credential?.scopes ? ` (${credential.scopes.join(", ")})` : "";
  ctx.info(
    `Logged in to ${client.transport.description} as ${data.user.userName} with ${which}${scopes}; profile '${ctx.profileName}', expires ${data.expiresAt}.`,
  );
  await endReplacedSession(ctx, replaced, token);
  await printLoginResult(ctx, client.transport.description, data, {
    credentialType: credential?.type ?? "api-token",
    ...(credential?.id && { tokenId: credential.id }),
    ...(credential?.name && { tokenName: credential.name }),
    ...(credential?.scopes && { scopes: credential.scopes }),
  });
}
