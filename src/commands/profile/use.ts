import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { withContext } from "../verb-helpers.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("use <name>")
    .description("make a profile the current one")
    .action(
      withContext(io, async (ctx, name: string) => {
        if (!ctx.profiles.get(name)) throw new UsageError(`No profile named '${name}'.`, "see 'bizctl profile list'");
        await ctx.profiles.use(name);
        ctx.info(`Now using profile '${name}'.`);
      }),
    );
}
