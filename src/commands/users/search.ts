import type { Command } from "commander";
import type { Context, MorePages } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { LIST_COUNT, SEARCH_TEXT_MAX } from "../../contract/resources.js";
import { type ListOptions, listResources } from "../resource-calls.js";
import { examples, withContext } from "../verb-helpers.js";
import { USER_COLUMNS } from "./columns.js";

type SearchOptions = Pick<ListOptions, "filter" | "startIndex" | "count" | "all">;

export function register(group: Command, io: Context["io"]): void {
  group
    .command("search")
    .description(
      "find users by free text in the user name, names, display name, e-mails and externalId, best matches first",
    )
    .argument("<text>", `what to look for, in any case (${SEARCH_TEXT_MAX} characters at most)`)
    .option("--filter <expr>", "SCIM filter the users found must also match, e.g. 'active eq true'")
    .option("--start-index <n>", "1-based index of the first result")
    .option("--count <n>", `results per page (default ${LIST_COUNT.default}, at most ${LIST_COUNT.max})`)
    .option("--all", "fetch every page")
    .addHelpText(
      "after",
      examples(
        "bizctl users search jdoe",
        "bizctl users search example.com --filter 'active eq true' --json",
        "bizctl users search 'Doe' --count 10",
      ),
    )
    .action(
      withContext(io, async (ctx, text: string, options: SearchOptions) => {
        const search = text.trim();
        // a blank text would find every user: a usage error before any request
        if (!search) throw new UsageError("users search needs some text to look for.");
        if (search.length > SEARCH_TEXT_MAX) {
          throw new UsageError(`users search takes at most ${SEARCH_TEXT_MAX} characters.`);
        }
        let more: MorePages | undefined;
        const rows = await listResources(ctx, { ...options, search, type: "User" }, (m) => {
          more = m;
        });
        await ctx.printList(rows, USER_COLUMNS, "users", more);
      }),
    );
}
