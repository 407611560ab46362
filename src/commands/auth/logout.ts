import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { describeError } from "../../cli/errors.js";
import { writeLine } from "../../cli/io.js";
import { ApiError } from "../../client/errors.js";
import { API_TOKEN_PREFIX } from "../../contract/api-tokens.js";
import * as auth from "../../contract/auth.js";
import { examples, withContext } from "../verb-helpers.js";

async function logout(ctx: Context): Promise<void> {
  // not requireCredential(): a token past its expiry must still be forgotten
  const credential = ctx.credential();
  if (!credential) {
    // the wanted state holds already: a script that logs out twice has nothing to handle
    const why = ctx.notLoggedIn();
    ctx.info(`${why.message} Nothing to do.`);
    return;
  }
  let failure: unknown;
  try {
    await (await ctx.client()).call(auth.logout);
  } catch (error) {
    // a token the server no longer honours is as good as logged out
    if (!(error instanceof ApiError && error.status === 401)) failure = error;
  }
  // BIZCTL_TOKEN is not ours to forget: when the server did not end its session, nothing happened
  if (failure && credential.source === "BIZCTL_TOKEN") throw failure;
  if (credential.source === "profile") {
    const { auth: _forgotten, ...rest } = ctx.profile;
    await ctx.profiles.save(ctx.profileName, rest);
  }
  if (failure) {
    // a server that is down must not keep a token on this machine, but the user must know the
    // session was not ended: whoever holds a copy of the token can use it until it expires
    const expiry = credential.stored ? ` until ${credential.stored.expiresAt}` : "";
    writeLine(
      ctx.io,
      `warning: forgot the token of profile '${ctx.profileName}', but the server did not end its session (${describeError(failure).message}); the session may still be live${expiry}.`,
    );
    return;
  }
  // a logout with an API token revokes it for every script that holds a copy: say so
  if (credential.token.startsWith(API_TOKEN_PREFIX)) {
    ctx.info(`Revoked the API token of profile '${ctx.profileName}' on the server, and forgot it.`);
    return;
  }
  ctx.info(`Logged out (profile '${ctx.profileName}').`);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("logout")
    .description("end the session on the server and forget the token (forgotten even when the server is down)")
    .addHelpText("after", examples("bizctl auth logout", "bizctl --profile prod auth logout"))
    .action(withContext(io, logout));
}
