import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { Progress } from "../../cli/progress.js";
import { printPages } from "../../cli/stream-output.js";
import { AUDIT_PAGE_SIZE } from "../../contract/audit.js";
import { examples, wholeNumber, withContext } from "../verb-helpers.js";
import { auditPage } from "./audit-page.js";
import { AUDIT_COLUMNS, AUDIT_CSV_COLUMNS } from "./columns.js";

interface Options {
  filter?: string;
  since?: string;
  until?: string;
  pageSize?: string;
  all?: boolean;
}

/**
 * The pages of the trail, newest first, each after the previous one's Link `next`. Without
 * --all, `more.until` is where the next page starts when there is one: the footer, said after
 * the records as every list says it.
 */
async function* pages(ctx: Context, options: Options, more: { until?: string }): AsyncGenerator<unknown[]> {
  const pageSize = wholeNumber(options.pageSize, "--page-size", 1, AUDIT_PAGE_SIZE.max);
  ctx.requireCredential();
  const query = {
    filter: options.filter,
    since: options.since,
    until: options.until,
    pagesize: pageSize ?? (options.all ? AUDIT_PAGE_SIZE.max : undefined),
  };
  const progress = new Progress(ctx, "audit records");
  let cursor: string | undefined;
  let seen = 0;
  do {
    const page = await auditPage(ctx, cursor ? { ...query, cursor } : query);
    seen += page.records.length;
    yield page.records;
    if (!options.all) {
      if (page.next) more.until = String(page.records.at(-1)?.time);
      return;
    }
    progress.update(seen, undefined);
    cursor = page.next;
  } while (cursor);
  progress.done();
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("list")
    .description("the audit trail, newest first (one page, or every page with --all)")
    .option("--filter <expr>", 'filter expression (action eq "login" and outcome ne "success")')
    .option("--since <time|cursor>", "records at or after this time, or after this record id (a resume cursor)")
    .option("--until <time>", "records before this time")
    .option("--page-size <n>", `records per page (default ${AUDIT_PAGE_SIZE.default}, at most ${AUDIT_PAGE_SIZE.max})`)
    .option("--all", "fetch every page")
    .addHelpText(
      "after",
      examples(
        "bizctl audit list",
        'bizctl audit list --filter \'action eq "login" and outcome ne "success"\'',
        "bizctl audit list --since 2026-01-01T00:00:00Z --all -o csv",
      ),
    )
    .action(
      withContext(io, async (ctx, options: Options) => {
        const more: { until?: string } = {};
        const count = await printPages(ctx, pages(ctx, options, more), {
          columns: AUDIT_COLUMNS,
          csvColumns: AUDIT_CSV_COLUMNS,
        });
        if (count === 0) ctx.info("No audit records.");
        else if (more.until) ctx.info(`More records: --all, or --until ${more.until}`);
      }),
    );
}
