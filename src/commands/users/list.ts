import type { Command } from "commander";
import type { Context, MorePages } from "../../cli/command-context.js";
import { type ListOptions, listOptions, listResources } from "../resource-calls.js";
import { examples, withContext } from "../verb-helpers.js";
import { USER_COLUMNS } from "./columns.js";

export function register(group: Command, io: Context["io"]): void {
  listOptions(group.command("list"))
    .description("list users, by user name unless --sort-by says otherwise")
    .addHelpText(
      "after",
      examples(
        "bizctl users list",
        "bizctl users list --filter 'active eq false' --json",
        "bizctl users list --filter 'passwordState eq \"none\"'",
      ),
    )
    .action(
      withContext(io, async (ctx, options: ListOptions) => {
        let more: MorePages | undefined;
        // as a person looks a user up: by name (the server's default order is the id, a UUID)
        const sorted = { sortBy: "userName", ...options };
        const rows = await listResources(ctx, { ...sorted, type: "User" }, (m) => {
          more = m;
        });
        await ctx.printList(rows, USER_COLUMNS, "users", more);
      }),
    );
}
