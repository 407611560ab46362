import { createWriteStream, type WriteStream } from "node:fs";
import { type Command, Option } from "commander";
import type { Context } from "../../cli/command-context.js";
import { CliError, EXIT, exitCodeFor, UsageError } from "../../cli/errors.js";
import {
  type ImportCounts,
  type ImportFailure,
  printImportSummary,
  reportsAsObject,
  summaryLine,
  zeroCounts,
} from "../../cli/import-summary.js";
import { Progress } from "../../cli/progress.js";
import type { Record_ } from "../../cli/record-input.js";
import { openRecordSource, type SourceItem, STREAM_FORMATS, type StreamFormat } from "../../cli/record-stream.js";
import { ApiError } from "../../client/errors.js";
import * as events from "../../contract/events.js";
import { keepMemoryFlat } from "../../v8-flags.js";
import { examples, withContext } from "../verb-helpers.js";

const ON_CONFLICT = ["fail", "skip", "update"] as const;
type OnConflict = (typeof ON_CONFLICT)[number];

interface ImportOptions {
  onConflict: OnConflict;
  dryRun?: boolean;
  atomic?: boolean;
  report?: string;
  format?: StreamFormat;
  batchSize: string;
}

/** How many failures the report prints; `--report FILE` has all of them. */
const SHOWN_FAILURES = 1000;

const JSON_CELLS = new Set(["attendees", "customFields"]);

/**
 * A CSV record as an event, the way `events export -o csv` writes one: an empty cell is an absent
 * field, allDay is true or false, tags are comma-separated (or a JSON list), attendees and
 * customFields are JSON. A cell that does not convert is sent as text, for the server to refuse.
 */
function eventFromCsv(record: Record<string, string>): Record_ {
  const event: Record_ = {};
  for (const [field, cell] of Object.entries(record)) {
    if (cell === "") continue;
    let value: unknown = cell;
    if (field === "allDay" && /^(true|false)$/i.test(cell)) value = cell.toLowerCase() === "true";
    else if (field === "version" && /^[0-9]+$/.test(cell)) value = Number(cell);
    else if (field === "tags")
      value = cell.trimStart().startsWith("[") ? parseJson(cell) : cell.split(",").map((t) => t.trim());
    else if (JSON_CELLS.has(field)) value = parseJson(cell);
    event[field] = value;
  }
  return event;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The CSV column of the field a problem points at (`/attendees/0/email` → attendees). */
function columnOf(columns: Map<string, number> | undefined, problem: events.BatchItemProblem | undefined) {
  const field = problem?.errors?.[0]?.path.split("/")[1] ?? (problem?.code === "conflict" ? "code" : undefined);
  return field === undefined ? undefined : columns?.get(field);
}

class ImportRun {
  readonly counts: ImportCounts = zeroCounts();
  readonly shown: ImportFailure[] = [];
  private readonly report?: WriteStream;
  columns?: Map<string, number>;
  /** the problem of the first failure: the exit code follows it */
  firstProblem?: string;

  constructor(reportFile: string | undefined) {
    if (reportFile) this.report = createWriteStream(reportFile, { mode: 0o600 });
  }

  fail(failure: ImportFailure): void {
    this.counts.failed++;
    this.firstProblem ??= failure.problem;
    if (this.shown.length < SHOWN_FAILURES) this.shown.push(failure);
    this.report?.write(`${JSON.stringify(failure)}\n`);
  }

  failItem(line: number, result: { code?: string; problem?: events.BatchItemProblem }): void {
    const column = columnOf(this.columns, result.problem);
    this.fail({
      line,
      ...(column !== undefined && { column }),
      ...(result.code !== undefined && { code: result.code }),
      problem: result.problem?.code ?? "internal_error",
      message: result.problem?.detail ?? "failed",
    });
  }

  async close(): Promise<void> {
    const report = this.report;
    if (report)
      await new Promise<void>((resolve, reject) =>
        report.end((error?: Error | null) => (error ? reject(error) : resolve())),
      );
  }
}

interface Pending {
  records: unknown[];
  lines: number[];
}

/**
 * Imports a file in batches of at most `events.EVENT_BATCH_MAX`, reading it as it goes: one
 * request in flight while the next batch is read. Without --atomic each batch is its own
 * transaction, so an interrupted run leaves whole batches; run again with --on-conflict skip, it
 * finishes the file. With --atomic (and with --dry-run) the batches are staged on the server and
 * written in one transaction at the end, or not at all (a dry run always rolls it back).
 */
async function importEvents(ctx: Context, file: string, options: ImportOptions): Promise<void> {
  ctx.requireCredential();
  const batchSize = Number(options.batchSize);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > events.EVENT_BATCH_MAX) {
    throw new UsageError(`--batch-size must be a whole number from 1 to ${events.EVENT_BATCH_MAX}.`);
  }
  keepMemoryFlat();
  const source = await openRecordSource(ctx.io, file, options.format);
  const client = await ctx.client();
  const run = new ImportRun(options.report);
  const progress = new Progress(ctx, "events");
  let importId: string | undefined;
  let read = 0;
  let staged = 0;

  const send = async (batch: Pending): Promise<void> => {
    const { data } = await client.call(events.batchEvents, {
      body: {
        items: batch.records,
        refs: batch.lines,
        onConflict: options.onConflict,
        ...(importId && { import: importId }),
      },
    });
    for (const result of data.results) {
      const line = result.ref ?? batch.lines[result.index] ?? 0;
      if (result.status === "failed") run.failItem(line, result);
      else if (result.status === "staged") staged++;
      else run.counts[result.status]++;
    }
  };

  let inflight: Promise<void> | undefined;
  let pending: Pending = { records: [], lines: [] };
  const flush = async () => {
    if (pending.records.length === 0) return;
    const batch = pending;
    pending = { records: [], lines: [] };
    await inflight;
    inflight = send(batch);
    // a failed request surfaces at the next flush or at the end; keep it from being unhandled
    inflight.catch(() => {});
  };

  const add = (item: SourceItem) => {
    if (item.columns) run.columns ??= item.columns;
    if (item.error) {
      run.fail({
        line: item.line,
        ...(item.error.column !== undefined && { column: item.error.column }),
        problem: item.error.code,
        message: item.error.message,
      });
      return;
    }
    const record = source.format === "csv" ? eventFromCsv(item.record as Record<string, string>) : item.record;
    pending.records.push(record);
    pending.lines.push(item.line);
  };

  try {
    // a dry run is staged like an atomic import and checked as a whole at the end: batch by
    // batch, nothing written, a code twice in the file in two batches would pass unnoticed
    if (options.atomic || options.dryRun) {
      const { data } = await client.call(events.startEventImport, { body: { onConflict: options.onConflict } });
      importId = data.id;
    }
    for await (const item of source.items) {
      read++;
      add(item);
      if (pending.records.length >= batchSize) await flush();
      progress.update(read, undefined, source.size ? source.bytesRead() / source.size : undefined);
    }
    await flush();
    await inflight;
  } catch (error) {
    progress.done(false);
    await run.close();
    await abandon(ctx, importId);
    if (error instanceof CliError) throw error;
    if (!reportsAsObject(ctx)) ctx.info(summaryLine({ read, counts: run.counts, dryRun: options.dryRun }));
    ctx.info(
      options.atomic || options.dryRun
        ? `Stopped; nothing was written (${options.dryRun ? "a dry run" : "the import is atomic"}).`
        : "Stopped; the batches answered above are written. Run the same import again with --on-conflict skip to finish it.",
    );
    throw error;
  }
  progress.done();
  if (read === 0) {
    // nothing to do is no mistake: `events export --filter … | events import -` must not fail a
    // script's run when the filter matched nothing (an empty file, `[]`, a CSV header alone)
    await run.close();
    await abandon(ctx, importId);
    ctx.info(`${file === "-" ? "stdin" : file} holds no events: nothing to import.`);
    await printReport(ctx, run, read, options);
    return;
  }

  if (importId) {
    if (run.counts.failed > 0 && options.atomic) {
      await abandon(ctx, importId);
      ctx.info(`${staged} event(s) valid; none written, because --atomic and ${run.counts.failed} failed.`);
    } else {
      const { data } = await client.call(events.commitEventImport, {
        params: { id: importId },
        body: { ...(options.dryRun && { dryRun: true }) },
      });
      for (const failure of data.failures) run.failItem(failure.ref ?? 0, failure);
      // an atomic run that failed would write nothing; a dry run without --atomic counts as the
      // run would, one item at a time
      if (data.committed || (options.dryRun && (!options.atomic || data.failures.length === 0))) {
        for (const key of ["created", "updated", "skipped"] as const) run.counts[key] = data[key];
      } else ctx.info(`None written: --atomic and ${data.failed} failed at the commit.`);
    }
  }
  await run.close();
  await printReport(ctx, run, read, options);
  if (run.counts.failed > 0) {
    throw new CliError(
      `${run.counts.failed} of ${read} event(s) failed${options.report ? `; all failures are in ${options.report}` : ""}.`,
      exitFor(run.firstProblem),
      "import_incomplete",
    );
  }
}

/** The exit code of a failed import: that of its first failure's problem (a malformed line is invalid input). */
function exitFor(problem: string | undefined): number {
  if (problem === "malformed" || problem === "not_an_object") return EXIT.validation;
  const code = exitCodeFor(new ApiError(400, { type: "", title: "", status: 400, detail: "", code: problem ?? "" }));
  return code === EXIT.ok ? EXIT.failure : code;
}

/** Drops an atomic import the client gives up on; the server would expire it anyway. */
async function abandon(ctx: Context, importId: string | undefined): Promise<void> {
  if (!importId) return;
  try {
    const client = await ctx.client();
    await client.call(events.abortEventImport, { params: { id: importId } });
  } catch {
    // unreachable now: it expires on the server
  }
}

/** The one import summary (cli/import-summary.ts), with the failures kept in memory. */
async function printReport(ctx: Context, run: ImportRun, read: number, options: ImportOptions): Promise<void> {
  await printImportSummary(ctx, {
    read,
    counts: run.counts,
    dryRun: options.dryRun,
    failures: run.shown,
    notShown: run.counts.failed - run.shown.length,
    columns: ["line", "column", "code", "problem", "message"],
  });
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("import <file>")
    .description(
      `create (or skip, or update) the events of an NDJSON, JSON array or CSV file ('-' for stdin), streamed in batches of up to ${events.EVENT_BATCH_MAX}; prints a summary and the failures`,
    )
    .addOption(
      new Option("--on-conflict <policy>", "an event whose code exists: fail it, skip it, or update it by code")
        .choices(ON_CONFLICT)
        .default("fail"),
    )
    .option("--dry-run", "validate everything and report what would happen; write nothing")
    .option("--atomic", "all or nothing: every event written in one transaction at the end, or none")
    .option("--report <file>", "write every failure there as NDJSON (line, column, code, problem, message)")
    .addOption(
      new Option(
        "--format <format>",
        "the file's format (default: from the extension, else its first character)",
      ).choices(STREAM_FORMATS),
    )
    .option("--batch-size <n>", `events per request, 1 to ${events.EVENT_BATCH_MAX}`, String(events.EVENT_BATCH_MAX))
    .addHelpText(
      "after",
      examples(
        "bizctl events import events.json",
        "bizctl events import <csv-file> --on-conflict skip --report failures.ndjson",
        "bizctl events import events.json --atomic --dry-run",
        "bizctl --profile prod events export -o ndjson | bizctl --profile staging events import -",
      ),
    )
    .action(withContext(io, importEvents));
}
