import type { Command } from "commander";
import type { Context } from "../../cli/context.js";
import { AuthError } from "../../cli/errors.js";
import { ApiError } from "../../client/errors.js";
import * as auth from "../../contract/auth.js";
import { examples, withContext } from "../shared.js";

async function logout(ctx: Context): Promise<void> {
  // not requireCredential(): a token past its expiry must still be forgotten
  const credential = ctx.credential();
  if (!credential) throw new AuthError(`Not logged in (profile '${ctx.profileName}').`);
  try {
    await (await ctx.client()).call(auth.logout);
  } catch (error) {
    // a token the server no longer honours is as good as logged out; forget it all the same
    if (!(error instanceof ApiError && error.status === 401)) throw error;
  }
  if (credential.source === "profile") {
    const { auth: _forgotten, ...rest } = ctx.profile;
    await ctx.profiles.save(ctx.profileName, rest);
  }
  ctx.info(`Logged out (profile '${ctx.profileName}').`);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("logout")
    .description("end the session on the server and forget the token")
    .addHelpText("after", examples("bizctl auth logout", "bizctl --profile prod auth logout"))
    .action(withContext(io, logout));
}
