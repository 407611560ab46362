import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { restoreCell } from "./csv-cells.js";
import { UsageError } from "./errors.js";
import type { IO } from "./io.js";
import { commonJs } from "./lazy-modules.js";
import { type Record_, readRecordsFile } from "./record-input.js";

export const STREAM_FORMATS = ["ndjson", "json", "csv"] as const;
export type StreamFormat = (typeof STREAM_FORMATS)[number];

/** One item of a file: a record, or why its text is not one; `line` is where it starts (1-based). */
export interface SourceItem {
  line: number;
  record?: Record_;
  /** CSV: the 1-based column of each header name */
  columns?: Map<string, number>;
  error?: { code: "malformed" | "not_an_object"; message: string; column?: number };
}

export interface RecordSource {
  format: StreamFormat;
  items: AsyncIterable<SourceItem>;
  /** bytes read so far, and the file's size when it has one (for the progress bar) */
  bytesRead(): number;
  size?: number;
}

/** A Map: a file's extension is a plain name (`data.constructor` is sniffed like any other). */
const BY_EXTENSION = new Map<string, StreamFormat>([
  ["ndjson", "ndjson"],
  ["jsonl", "ndjson"],
  ["csv", "csv"],
]);

/**
 * The first bytes that are not white space (or a byte-order mark) tell JSON array, NDJSON or CSV.
 * What was read to tell is put back (unshift), so that the parser reads the stream from its start.
 */
async function sniff(input: Readable): Promise<StreamFormat | undefined> {
  const seen: Buffer[] = [];
  let format: StreamFormat | undefined;
  while (format === undefined && !input.readableEnded) {
    const chunk = input.read() as Buffer | null;
    if (chunk === null) {
      await new Promise<void>((resolve) => {
        const go = () => {
          input.off("readable", go).off("end", go).off("error", go);
          resolve();
        };
        input.on("readable", go).on("end", go).on("error", go);
      });
      if (input.errored) break;
      continue;
    }
    seen.push(Buffer.from(chunk));
    const text = Buffer.concat(seen)
      .toString("utf8")
      .replace(/^\uFEFF/, "")
      .trimStart();
    if (text.length > 0) format = text.startsWith("[") ? "json" : text.startsWith("{") ? "ndjson" : "csv";
  }
  if (format !== undefined) input.unshift(Buffer.concat(seen));
  return format;
}

/**
 * Opens a file (or stdin for `-`) as a stream of records, read as it goes so that memory stays
 * constant whatever the size: NDJSON line by line, a JSON array element by element (stream-json),
 * CSV record by record (csv-parse). The format comes from `format`, else the extension, else
 * the first character.
 */
export async function openRecordSource(io: IO, file: string, format?: StreamFormat): Promise<RecordSource> {
  let raw: Readable;
  let size: number | undefined;
  // a read stream of a file counts what it has read; stdin has no size to compare it with anyway
  let bytesRead = () => 0;
  if (file === "-") raw = io.stdin;
  else {
    try {
      const info = await stat(file);
      if (info.isDirectory()) throw new Error("it is a directory");
      size = info.size;
    } catch (error) {
      throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`);
    }
    const stream = createReadStream(file);
    bytesRead = () => stream.bytesRead;
    raw = stream;
  }
  const extension = file.split(".").pop()?.toLowerCase() ?? "";
  if (!format && (extension === "yaml" || extension === "yml")) {
    raw.destroy();
    return { format: "json", items: yamlItems(io, file), bytesRead, ...(size !== undefined && { size }) };
  }
  const named = format ?? BY_EXTENSION.get(file.split(".").pop()?.toLowerCase() ?? "");
  const sniffed = named ?? (await sniff(raw));
  // nothing but white space: a stream already at its end would never close a parser
  if (sniffed === undefined)
    return { format: "ndjson", items: (async function* () {})(), bytesRead, ...(size !== undefined && { size }) };
  const chosen = sniffed;
  const items = chosen === "csv" ? csvItems(raw) : chosen === "json" ? jsonArrayItems(raw, file) : ndjsonItems(raw);
  return { format: chosen, items, bytesRead, ...(size !== undefined && { size }) };
}

/** A YAML list cannot be read element by element: it is read whole, as before streaming came. */
async function* yamlItems(io: IO, file: string): AsyncGenerator<SourceItem> {
  const records = await readRecordsFile(io, file);
  for (const [index, record] of records.entries()) yield { line: index + 1, record };
}

const isObject = (value: unknown): value is Record_ =>
  value !== null && typeof value === "object" && !Array.isArray(value);

async function* ndjsonItems(input: Readable): AsyncGenerator<SourceItem> {
  // loaded by the commands that read records, not at every start
  const { createInterface } = await import("node:readline");
  let line = 0;
  for await (const text of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    line++;
    const body = line === 1 ? text.replace(/^\uFEFF/, "") : text;
    if (!body.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch (error) {
      yield { line, error: { code: "malformed", message: `not JSON: ${(error as Error).message}` } };
      continue;
    }
    yield isObject(value)
      ? { line, record: value }
      : { line, error: { code: "not_an_object", message: "not an object" } };
  }
}

/**
 * A JSON array has no line per element: `line` is the element's 1-based position in the array.
 * Malformed JSON ends the array there (nothing after it can be told apart), as one failure.
 */
async function* jsonArrayItems(input: Readable, file: string): AsyncGenerator<SourceItem> {
  const { streamArray } = await import("stream-json/streamers/stream-array.js");
  const elements = streamArray.withParserAsStream();
  input.pipe(elements);
  input.on("error", (error) => elements.destroy(error));
  let position = 0;
  try {
    for await (const { key, value } of elements as AsyncIterable<{ key: number; value: unknown }>) {
      position = key + 1;
      yield isObject(value)
        ? { line: position, record: value }
        : { line: position, error: { code: "not_an_object", message: "not an object" } };
    }
  } catch (error) {
    const where = file === "-" ? "stdin" : file;
    yield {
      line: position + 1,
      error: { code: "malformed", message: `${where} is not a JSON array: ${(error as Error).message}` },
    };
  }
}

interface CsvInfo {
  lines: number;
  columns?: { name: string }[];
}

/**
 * CSV with a header row naming the fields (a byte-order mark is skipped); each cell, the header's
 * too, loses the `'` our CSV output puts before a formula trigger. A record that csv-parse
 * refuses (a wrong number of cells) is reported at its line and the rest go on.
 */
async function* csvItems(input: Readable): AsyncGenerator<SourceItem> {
  const { parse } = commonJs(await import("csv-parse"));
  const skipped: SourceItem[] = [];
  const parser = parse({
    bom: true,
    cast: restoreCell,
    columns: true,
    info: true,
    raw: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
  });
  let columns: Map<string, number> | undefined;
  let overcount = 0;
  parser.on("skip", (error: { lines?: number; column?: string | number | null; message: string }) => {
    const column = typeof error.column === "string" ? columns?.get(error.column) : undefined;
    skipped.push({
      line: (error.lines ?? 0) - overcount,
      error: { code: "malformed", message: error.message, ...(column !== undefined && { column }) },
    });
  });
  input.pipe(parser);
  input.on("error", (error) => parser.destroy(error));
  try {
    for await (const { record, info, raw } of parser as AsyncIterable<{
      record: Record<string, string>;
      info: CsvInfo;
      raw: string;
    }>) {
      while (skipped.length > 0) yield skipped.shift()!;
      columns ??= new Map((info.columns ?? []).map((c, i) => [c.name, i + 1]));
      // info.lines is the record's last line, but csv-parse counts a CRLF inside quotes as two
      // lines; a quoted field may span several, so the record starts its line breaks earlier
      const body = raw.replace(/\r?\n?$/, "");
      overcount += (body.match(/\r\n/g) ?? []).length;
      const breaks = (body.match(/\r\n|\r|\n/g) ?? []).length;
      yield { line: info.lines - overcount - breaks, record, columns };
    }
  } catch (error) {
    const e = error as { lines?: number; message: string };
    skipped.push({ line: e.lines ?? 0, error: { code: "malformed", message: e.message } });
  }
  yield* skipped;
}
