import type { Command } from "commander";
import type { Context, MorePages } from "../../cli/context.js";
import { UsageError } from "../../cli/errors.js";
import { Progress } from "../../cli/progress.js";
import * as resources from "../../contract/resources.js";
import { examples, wholeNumber, withContext } from "../shared.js";
import { resourceColumns } from "./columns.js";

export interface ListOptions {
  type?: string;
  filter?: string;
  sortBy?: string;
  sortOrder?: string;
  startIndex?: string;
  count?: string;
  all?: boolean;
}

export async function listResources(
  ctx: Context,
  options: ListOptions,
  onMore?: (more: MorePages | undefined) => void,
): Promise<Record<string, unknown>[]> {
  const startIndex = wholeNumber(options.startIndex, "--start-index", 1, 999_999_999);
  const count = wholeNumber(options.count, "--count", 0, resources.LIST_COUNT.max);
  ctx.requireCredential();
  if (options.sortOrder && !["ascending", "descending"].includes(options.sortOrder)) {
    throw new UsageError("--sort-order is ascending or descending.");
  }
  const client = await ctx.client();
  const query = {
    resourcetypes: options.type,
    filter: options.filter,
    sortby: options.sortBy,
    sortorder: options.sortOrder,
    count: count ?? (options.all ? String(resources.LIST_COUNT.max) : undefined),
  };
  if (!options.all) {
    const { data } = await client.call(resources.listResources, {
      query: { ...query, startindex: startIndex },
    });
    const next = Number(data.startIndex) + data.Resources.length;
    const total = Number(data.totalResults);
    onMore?.(
      Number.isFinite(next) && next <= total
        ? { shown: data.Resources.length, total, next: `--start-index ${next}` }
        : undefined,
    );
    return data.Resources;
  }
  const rows: Record<string, unknown>[] = [];
  const progress = new Progress(ctx, "resources");
  for (let start = Number(startIndex ?? 1); ; ) {
    const { data } = await client.call(resources.listResources, { query: { ...query, startindex: String(start) } });
    rows.push(...data.Resources);
    progress.update(rows.length, data.totalResults);
    start += data.itemsPerPage;
    if (data.itemsPerPage === 0 || start > data.totalResults) break;
  }
  progress.done();
  return rows;
}

export function listOptions(command: Command): Command {
  return command
    .option("--filter <expr>", "SCIM filter, e.g. 'userName sw \"j\" and active eq true'")
    .option("--sort-by <attr>", "attribute path to sort by")
    .option("--sort-order <order>", "ascending (default) or descending")
    .option("--start-index <n>", "1-based index of the first result")
    .option(
      "--count <n>",
      `results per page (default ${resources.LIST_COUNT.default}, at most ${resources.LIST_COUNT.max})`,
    )
    .option("--all", "fetch every page");
}

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
