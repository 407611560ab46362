import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { OUTPUT_FORMATS } from "../../cli/output.js";
import { Progress } from "../../cli/progress.js";
import { printPages } from "../../cli/stream-output.js";
import { csvRow, EXPORT_COLUMNS, exportedUser } from "../../cli/user-records.js";
import * as resources from "../../contract/resources.js";
import { examples, withContext } from "../verb-helpers.js";

/** Every user, a page at a time, in the form `users import` reads. */
async function* userPages(ctx: Context, filter: string | undefined, flat: boolean): AsyncGenerator<unknown[]> {
  const client = await ctx.client();
  const progress = new Progress(ctx, "users");
  let seen = 0;
  for (let start = 1; ; ) {
    const { data } = await client.call(resources.listResources, {
      query: {
        resourcetypes: "User",
        filter,
        sortby: "userName",
        startindex: start,
        count: resources.LIST_COUNT.max,
      },
    });
    seen += data.Resources.length;
    progress.update(seen, data.totalResults);
    yield data.Resources.map((user) => (flat ? csvRow(user) : exportedUser(user)));
    start += data.itemsPerPage;
    if (data.itemsPerPage === 0 || start > data.totalResults) break;
  }
  progress.done();
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("export")
    .description(
      "every user in the form 'users import' reads (-o csv: the header convention; -o ndjson: every attribute), without any secret",
    )
    .option("--filter <expr>", "SCIM filter")
    .addHelpText(
      "after",
      examples("bizctl users export -o csv > users.csv", "bizctl users export -o ndjson --filter 'active eq true'"),
    )
    .action(
      withContext(io, async (ctx, options: { filter?: string }) => {
        ctx.requireCredential();
        const { flatRows } = OUTPUT_FORMATS[ctx.format()];
        const count = await printPages(ctx, userPages(ctx, options.filter, flatRows), { csvColumns: EXPORT_COLUMNS });
        ctx.info(`Exported ${count} user(s).`);
      }),
    );
}
