/**
 * The one summary every import prints (`events import`, `users import`): the counts on stderr,
 * the failures on stdout; with `-o json` or `-o yaml`, one object on stdout,
 *
 *   {read, created, updated, skipped, failed, [invited,] failures: [{line, column?, code?,
 *    userName?, problem, message}]}
 *
 * so that a script reads either import's outcome the same way.
 */
import type { Context } from "./command-context.js";
import { OUTPUT_FORMATS } from "./output.js";

export interface ImportCounts {
  created: number;
  updated: number;
  skipped: number;
  failed: number;
}

/** One failed record: where in the file, which record (an event's code, a user's userName), and why. */
export interface ImportFailure {
  line: number;
  column?: number;
  /** the event's code */
  code?: string;
  userName?: string;
  /** the problem code: `validation_failed`, `conflict`, `invalid_line`… */
  problem: string;
  message: string;
}

export interface ImportSummary {
  read: number;
  counts: ImportCounts;
  /** counts beyond the four (`invited`), in the object and the line alike */
  more?: Record<string, number>;
  dryRun?: boolean;
  failures: ImportFailure[];
  /** failures not in `failures` (beyond what is printed) */
  notShown?: number;
  /** the columns of the failures' table (and CSV) */
  columns: string[];
}

export const zeroCounts = (): ImportCounts => ({ created: 0, updated: 0, skipped: 0, failed: 0 });

/** The counts as one line: "Imported: 2 created, 0 updated, 1 skipped, 0 failed, of 3 read." */
export function summaryLine(summary: Omit<ImportSummary, "failures" | "columns">): string {
  const { read, counts, more = {}, dryRun } = summary;
  const extra = Object.entries(more).map(([name, n]) => `, ${n} ${name}`);
  return `${dryRun ? "Dry run (nothing written)" : "Imported"}: ${counts.created} created, ${counts.updated} updated, ${counts.skipped} skipped, ${counts.failed} failed${extra.join("")}, of ${read} read.`;
}

/** With -o json or yaml the object on stdout carries the counts: no line on stderr then. */
export function reportsAsObject(ctx: Context): boolean {
  return OUTPUT_FORMATS[ctx.format()].summaryAsDocument;
}

/** The summary line on stderr, and the failures (or the whole object with -o json/yaml) on stdout. */
export async function printImportSummary(ctx: Context, summary: ImportSummary): Promise<void> {
  const { read, counts, more = {}, failures } = summary;
  const sorted = [...failures].sort((a, b) => a.line - b.line);
  if (reportsAsObject(ctx)) {
    await ctx.print({ read, ...counts, ...more, failures: sorted });
  } else {
    ctx.info(summaryLine(summary));
    if (sorted.length > 0) await ctx.print(sorted, summary.columns);
  }
  if (summary.notShown) ctx.info(`${summary.notShown} more failure(s) not shown; --report FILE writes them all.`);
}
