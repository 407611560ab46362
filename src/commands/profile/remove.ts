import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { DEFAULT_PROFILE } from "../../config/profiles.js";
import { withContext } from "../verb-helpers.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("remove <name>")
    .description("remove a profile and its stored token")
    .action(
      withContext(io, async (ctx, name: string) => {
        if (name === DEFAULT_PROFILE) throw new UsageError("The default profile cannot be removed.");
        if (!ctx.profiles.get(name)) throw new UsageError(`No profile named '${name}'.`, "see 'bizctl profile list'");
        await ctx.profiles.remove(name);
        ctx.info(`Removed profile '${name}'.`);
      }),
    );
}
