import type { Command } from "commander";
import type { Context, MorePages } from "../../cli/command-context.js";
import { type ListOptions, listOptions, listResources } from "../resource-calls.js";
import { examples, withContext } from "../verb-helpers.js";
import { USER_COLUMNS } from "./columns.js";

export function register(group: Command, io: Context["io"]): void {
  listOptions(group.command("list"))
    .description("list users")
    .addHelpText("after", examples("bizctl users list", "bizctl users list --filter 'active eq false' --json"))
    .action(
      withContext(io, async (ctx, options: ListOptions) => {
        let more: MorePages | undefined;
        const rows = await listResources(ctx, { ...options, type: "User" }, (m) => {
          more = m;
        });
        await ctx.printList(rows, USER_COLUMNS, "users", more);
      }),
    );
}
