import type { Command } from "commander";
import type { Context, MorePages } from "../../cli/command-context.js";
import { CliError, EXIT, UsageError } from "../../cli/errors.js";
import { fieldsToFetch } from "../../cli/fields.js";
import { shellWord } from "../../cli/hints.js";
import { noteInterrupt } from "../../cli/interrupt.js";
import { Progress } from "../../cli/progress.js";
import { printPages, resumeCommand, streams } from "../../cli/stream-output.js";
import { QUERY_INTEGER_LIMIT } from "../../contract/common.js";
import * as events from "../../contract/events.js";
import { keepMemoryFlat } from "../../v8-flags.js";
import { examples, wholeNumber, withContext } from "../verb-helpers.js";
import { EVENT_COLUMNS } from "./columns.js";

interface Options {
  order?: string;
  page?: string;
  pageSize?: string;
  filter?: string;
  all?: boolean;
  /** the cursor of an interrupted --all or export: go on after it */
  after?: string;
  /** the command (`events export`) that Ctrl-C names with the cursor to resume from; none: not resumable */
  resumeAs?: string;
  /** false: every page read without a progress bar (a selection read before a question) */
  progress?: boolean;
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

/** The flags of a list that a resumed one must repeat: the cursor belongs to its order, filter and page size. */
function* listFlags(options: Options): Generator<string> {
  if (options.order !== undefined) yield `--order ${shellWord(options.order)}`;
  if (options.filter !== undefined) yield `--filter ${shellWord(options.filter)}`;
  if (options.pageSize !== undefined) yield `--page-size ${shellWord(options.pageSize)}`;
}

/** The cursor of a response's Link `next`, if it has one. */
function nextCursor(link: string | undefined): string | undefined {
  const next = link?.split(/,\s*(?=<)/).find((part) => /;\s*rel="next"/.test(part));
  const target = next && /^<([^>]*)>/.exec(next.trim())?.[1];
  return target ? (new URL(target, "http://link.invalid").searchParams.get("cursor") ?? undefined) : undefined;
}

/**
 * The pages of the list from --page on: the first by number, then each by the cursor of the
 * previous page's Link `next`, so that no page costs a scan of those before it.
 */
export async function* eventPages(
  ctx: Context,
  options: Options,
  onMore?: (more: MorePages | undefined) => void,
): AsyncGenerator<unknown[]> {
  const page = wholeNumber(options.page, "--page", 1, QUERY_INTEGER_LIMIT);
  const pageSize = wholeNumber(options.pageSize, "--page-size", 1, events.EVENT_PAGE_SIZE.max);
  ctx.requireCredential();
  const client = await ctx.client();
  const query = {
    order: options.order,
    pagesize: pageSize ?? (options.all ? events.EVENT_PAGE_SIZE.max : undefined),
    fields: fieldsToFetch(ctx.globals.fields),
    filter: options.filter,
  };
  // every page (export, list --all): a million events must not take more memory than a thousand
  if (options.all) keepMemoryFlat();
  const progress = options.progress === false ? undefined : new Progress(ctx, "events");
  if (options.after !== undefined && options.page !== undefined) {
    throw new UsageError("--after continues where an interrupted list stopped; it takes no --page.");
  }
  let cursor = options.after;
  let total: number | undefined;
  let seen = 0;
  // every page printed is whole: Ctrl-C stops before the next one and names the cursor to resume from
  const interrupt = options.all && options.resumeAs && streams(ctx) ? noteInterrupt() : undefined;
  try {
    do {
      const { data, headers } = await client.call(events.listEvents, {
        query: cursor ? { ...query, cursor } : { ...query, page },
      });
      total ??= data.total;
      seen += data.data.length;
      if (!options.all) {
        onMore?.(morePages(data));
        yield data.data;
        return;
      }
      yield data.data;
      progress?.update(seen, total);
      cursor = nextCursor(headers.link);
      if (interrupt?.stopped && cursor) {
        progress?.done();
        const again = resumeCommand(ctx, `${options.resumeAs} ${[...listFlags(options)].join(" ")}`, cursor);
        throw new CliError(
          `Interrupted after ${seen} event(s).`,
          EXIT.interrupted,
          "interrupted",
          `resume with: ${again}`,
        );
      }
    } while (cursor);
  } finally {
    interrupt?.release();
  }
  progress?.done();
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
    .option("--after <cursor>", "with --all: go on after this cursor (printed by an interrupted --all)")
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
        const pages = eventPages(ctx, { ...options, resumeAs: "events list --all" }, (m) => {
          more = m;
        });
        if (options.all) {
          const count = await printPages(ctx, pages, { columns: EVENT_COLUMNS, csvColumns: [...events.EVENT_FIELDS] });
          if (count === 0) ctx.info("No events.");
        } else for await (const page of pages) await ctx.printList(page, EVENT_COLUMNS, "events", more);
      }),
    );
}
