import type { Command } from "commander";
import type { Context, MorePages } from "../../cli/command-context.js";
import { type ListOptions, listOptions, listResources } from "../resource-calls.js";
import { examples, withContext } from "../verb-helpers.js";
import { resourceColumns } from "./columns.js";

export function register(group: Command, io: Context["io"]): void {
  listOptions(group.command("list"))
    .description("list resources (one page, or every page with --all)")
    .option("--type <types>", "comma-separated resource types")
    .addHelpText(
      "after",
      examples(
        "bizctl resources list --type User --filter 'userName sw \"j\" and active eq true' --sort-by userName",
        'bizctl resources list --filter \'emails[type eq "work" and value co "@example.com"]\' --all --json',
      ),
    )
    .action(
      withContext(io, async (ctx, options: ListOptions) => {
        let more: MorePages | undefined;
        const rows = await listResources(ctx, options, (m) => {
          more = m;
        });
        await ctx.printList(rows, resourceColumns(rows), "resources", more);
      }),
    );
}
