import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { createClient, targetOf } from "../../cli/compose.js";
import { UsageError } from "../../cli/errors.js";
import { writeLine } from "../../cli/io.js";
import { promptConfirm } from "../../cli/prompts.js";
import { DEFAULT_PROFILE, type Profile } from "../../config/profiles.js";
import { API_TOKEN_PREFIX } from "../../contract/api-tokens.js";
import { endSession } from "../session-end.js";
import { examples, withContext } from "../verb-helpers.js";

interface Options {
  logout?: boolean;
  keepSession?: boolean;
}

/**
 * Whether to end the session of the token the profile keeps before it is forgotten: the flag,
 * else asked on a terminal (yes by default), else kept, with a warning that says so.
 */
async function wantsLogout(ctx: Context, name: string, profile: Profile, options: Options): Promise<boolean> {
  const auth = profile.auth;
  if (!auth || Date.parse(auth.expiresAt) <= Date.now()) return false;
  if (options.logout) return true;
  if (options.keepSession) return false;
  const what = auth.token.startsWith(API_TOKEN_PREFIX) ? "Revoke its API token" : "End its session";
  if (ctx.canPrompt()) return promptConfirm(ctx.io, `${what} on ${profile.server} first?`, true);
  writeLine(
    ctx.io,
    `warning: profile '${name}' kept a live token; its session on ${profile.server} stays open until ${auth.expiresAt} (--logout ends it, --keep-session keeps it without this warning).`,
  );
  return false;
}

/** Ends the profile's session on its server, best effort: a server that is down is said, not fatal. */
async function logOut(ctx: Context, name: string, profile: Profile): Promise<void> {
  const token = profile.auth?.token as string;
  const client = await createClient(targetOf(profile, undefined, ctx.io.env), { authorization: () => undefined });
  try {
    const result = await endSession(client, token);
    if (result.ended) ctx.info(`Logged out of ${profile.server} (profile '${name}').`);
    else {
      writeLine(
        ctx.io,
        `warning: the session of profile '${name}' was not ended on the server (${result.why}); it may still be live until ${profile.auth?.expiresAt}.`,
      );
    }
  } finally {
    await client.close();
  }
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("remove <name>")
    .description("remove a profile and its stored token (on a terminal, asks whether to log out first)")
    .option("--logout", "end the profile's session on its server first (revoke a kept API token)")
    .option("--keep-session", "forget the token without ending its session (it stays live until it expires)")
    .addHelpText(
      "after",
      examples(
        "bizctl profile remove staging",
        "bizctl profile remove staging --logout",
        "bizctl profile remove staging --keep-session",
      ),
    )
    .action(
      withContext(io, async (ctx, name: string, options: Options) => {
        if (options.logout && options.keepSession) {
          throw new UsageError("--logout and --keep-session contradict each other.", "give one of them");
        }
        if (name === DEFAULT_PROFILE) throw new UsageError("The default profile cannot be removed.");
        const profile = ctx.profiles.get(name);
        if (!profile) throw new UsageError(`No profile named '${name}'.`, "see 'bizctl profile list'");
        if (await wantsLogout(ctx, name, profile, options)) await logOut(ctx, name, profile);
        await ctx.profiles.remove(name);
        // removing the current profile makes another one current: say which
        ctx.info(`Removed profile '${name}'; the current profile is '${ctx.profiles.current()}'.`);
      }),
    );
}
