import { setTimeout as sleep } from "node:timers/promises";
import type { Command } from "commander";
import { type Context, chosenFormat } from "../../cli/command-context.js";
import { noteInterrupt } from "../../cli/interrupt.js";
import { OUTPUT_FORMATS } from "../../cli/output.js";
import { AUDIT_PAGE_SIZE } from "../../contract/audit.js";
import { examples, wholeNumber, withContext } from "../verb-helpers.js";
import { auditPage } from "./audit-page.js";
import { AUDIT_COLUMNS, AUDIT_CSV_COLUMNS } from "./columns.js";

interface Options {
  follow?: boolean;
  filter?: string;
  since?: string;
  lines: string;
}

/** Idle polls wait longer and longer, up to this; a poll that finds records polls again at once. */
export const POLL = { firstMs: 250, maxMs: 1500 } as const;

/** The newest `count` records, oldest first. */
async function lastRecords(ctx: Context, options: Options, count: number) {
  const page = await auditPage(ctx, { filter: options.filter, pagesize: count });
  return page.records.reverse();
}

/**
 * Prints records as they come: on a terminal a row each, piped one NDJSON line each (unless -o
 * names another format), so that a pipe sees each record as soon as it is read. A table has one
 * header, as `kubectl get --watch` prints it: later rows have the first rows' columns under it.
 * CSV, framed as every streamed list frames it (OUTPUT_FORMATS), writes its header once, with the
 * columns of `audit list -o csv`, so that every record's row lines up under it.
 */
function printer(ctx: Context) {
  const format = chosenFormat(ctx.globals) ?? (ctx.io.stdout.isTTY ? "table" : "ndjson");
  const { pages: framing, flatRows } = OUTPUT_FORMATS[format];
  let columns: string[] | undefined;
  let first = true;
  return async (records: unknown[]) => {
    if (records.length === 0) return;
    const text = await ctx.render(records, {
      format,
      fields: columns ?? ctx.fields() ?? (flatRows ? AUDIT_CSV_COLUMNS : undefined),
      columns: AUDIT_COLUMNS,
      header: framing !== "header-once" || first,
      shown: (shown) => {
        columns ??= shown;
      },
    });
    ctx.io.stdout.write(format === "table" && !first ? text.slice(text.indexOf("\n") + 1) : text);
    first = false;
  };
}

/**
 * `audit tail`: the last records, then (--follow) each new one, read oldest first after the last
 * id seen. Ids sort in time order, so the last id printed is the resume cursor: `--since` it
 * continues with the next record, none lost and none repeated. Ctrl-C ends it and prints that
 * cursor on stderr.
 */
async function tail(ctx: Context, options: Options): Promise<void> {
  const lines = Number(wholeNumber(options.lines, "--lines", 0, AUDIT_PAGE_SIZE.max));
  ctx.requireCredential();
  const print = printer(ctx);
  let cursor = options.since;
  if (cursor === undefined) {
    const last = lines > 0 ? await lastRecords(ctx, options, lines) : [];
    await print(last);
    cursor =
      (last.at(-1) as { id?: string } | undefined)?.id ?? (await newestId(ctx, options)) ?? new Date(0).toISOString();
  }
  // Ctrl-C ends the follow cleanly, so that the cursor is printed
  const interrupt = noteInterrupt();
  try {
    let wait: number = POLL.firstMs;
    do {
      const page = await auditPage(ctx, {
        filter: options.filter,
        since: cursor,
        order: "oldest",
        pagesize: AUDIT_PAGE_SIZE.max,
      });
      await print(page.records);
      if (page.last) cursor = page.last;
      if (!options.follow || interrupt.stopped) break;
      if (page.next) continue;
      wait = page.records.length > 0 ? POLL.firstMs : Math.min(wait * 2, POLL.maxMs);
      await sleepUnless(wait, () => interrupt.stopped);
    } while (!interrupt.stopped);
  } finally {
    interrupt.release();
  }
  ctx.info(`Resume with: bizctl audit tail --follow --since ${cursor}`);
}

/** The id of the newest record visible with this filter (where a tail with nothing to show starts). */
async function newestId(ctx: Context, options: Options): Promise<string | undefined> {
  const page = await auditPage(ctx, { filter: options.filter, pagesize: 1 });
  return (page.records[0] as { id?: string } | undefined)?.id;
}

/** Sleeps `ms`, waking early (every 50 ms) once `stopped` says so. */
async function sleepUnless(ms: number, stopped: () => boolean): Promise<void> {
  for (let waited = 0; waited < ms && !stopped(); waited += 50) await sleep(50);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("tail")
    .description("the latest audit records, then (--follow) each new one as it is written")
    .option("-f, --follow", "keep polling for new records until Ctrl-C, which prints the resume cursor")
    .option("--filter <expr>", "filter expression, as for audit list")
    .option("--since <cursor|time>", "start after this record id (a printed resume cursor) or at this time")
    .option("-n, --lines <n>", "how many of the latest records to show first (without --since)", "10")
    .addHelpText(
      "after",
      examples(
        "bizctl audit tail",
        "bizctl audit tail --follow --filter 'outcome ne \"success\"'",
        "bizctl audit tail --follow --since <cursor>",
      ),
    )
    .action(withContext(io, tail));
}
