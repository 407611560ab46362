import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { withContext } from "../verb-helpers.js";
import { describe } from "./describe.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("show [name]")
    .description("show a profile (the selected one by default)")
    .action(
      withContext(io, async (ctx, name: string | undefined) => {
        const chosen = name ?? ctx.profileName;
        const profile = ctx.profiles.get(chosen);
        if (!profile) throw new UsageError(`No profile named '${chosen}'.`, "see 'bizctl profile list'");
        await ctx.print({ ...describe(chosen, profile, ctx.profileName), configFile: ctx.profiles.file });
      }),
    );
}
