import type { Command } from "commander";
import type { Context, MorePages } from "../../cli/context.js";
import { Progress } from "../../cli/progress.js";
import * as events from "../../contract/events.js";
import { examples, wholeNumber, withContext } from "../shared.js";
import { EVENT_COLUMNS } from "./columns.js";

interface Options {
  order?: string;
  page?: string;
  pageSize?: string;
  filter?: string;
  all?: boolean;
}

/** The next page after this one, from the page body's numbers; none when they are missing. */
function morePages(body: {
  data: unknown[];
  page?: unknown;
  totalPages?: unknown;
  total?: unknown;
}): MorePages | undefined {
  const { page, totalPages, total } = body;
  if (typeof page !== "number" || typeof totalPages !== "number" || typeof total !== "number") return undefined;
  if (page >= totalPages) return undefined;
  return { shown: body.data.length, total, next: `--page ${page + 1}` };
}

export async function listEvents(
  ctx: Context,
  options: Options,
  onMore?: (more: MorePages | undefined) => void,
): Promise<unknown[]> {
  const page = wholeNumber(options.page, "--page", 1, 999_999_999);
  const pageSize = wholeNumber(options.pageSize, "--page-size", 1, events.EVENT_PAGE_SIZE.max);
  ctx.requireCredential();
  const client = await ctx.client();
  const query = {
    order: options.order,
    pagesize: pageSize ?? (options.all ? String(events.EVENT_PAGE_SIZE.max) : undefined),
    fields: ctx.globals.fields,
    filter: options.filter,
  };
  if (!options.all) {
    const { data } = await client.call(events.listEvents, { query: { ...query, page } });
    onMore?.(morePages(data));
    return data.data;
  }
  const rows: unknown[] = [];
  const progress = new Progress(ctx, "events");
  for (let n = Number(page ?? 1); ; n++) {
    const { data } = await client.call(events.listEvents, { query: { ...query, page: String(n) } });
    rows.push(...data.data);
    progress.update(rows.length, data.total);
    if (n >= data.totalPages) break;
  }
  progress.done();
  return rows;
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("list")
    .description("list events (one page, or every page with --all)")
    .option("--order <fields>", "comma-separated fields, '-' for descending (default startsAt,code)")
    .option("--page <n>", "page number, from 1")
    .option(
      "--page-size <n>",
      `events per page (default ${events.EVENT_PAGE_SIZE.default}, at most ${events.EVENT_PAGE_SIZE.max})`,
    )
    .option("--filter <expr>", "filter expression")
    .option("--all", "fetch every page")
    .addHelpText(
      "after",
      examples(
        "bizctl events list",
        "bizctl events list --order -startsAt --page-size 50",
        "bizctl events list --all --json | jq '.[].code'",
      ),
    )
    .action(
      withContext(io, async (ctx, options: Options) => {
        let more: MorePages | undefined;
        const rows = await listEvents(ctx, options, (m) => {
          more = m;
        });
        await ctx.printList(rows, EVENT_COLUMNS, "events", more);
      }),
    );
}
