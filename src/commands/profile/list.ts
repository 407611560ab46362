import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { withContext } from "../verb-helpers.js";
import { describe } from "./describe.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("list")
    .description("list profiles")
    .action(
      withContext(io, async (ctx) => {
        const current = ctx.profileName;
        await ctx.print(Object.entries(ctx.profiles.all()).map(([name, p]) => describe(name, p, current)));
      }),
    );
}
