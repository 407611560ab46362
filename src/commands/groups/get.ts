import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { examples, withContext } from "../verb-helpers.js";
import { resolveGroup } from "./shared.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("get <group>")
    .description("one group, by display name or id, without its members (see groups members)")
    .addHelpText("after", examples("bizctl groups get 'Help Desk'", "bizctl groups get <id> --json"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        await ctx.print(await resolveGroup(ctx, reference));
      }),
    );
}
