import stringWidth from "string-width";
import { neutraliseCell } from "./csv-cells.js";
import { commonJs, importYaml } from "./lazy-modules.js";
import { applyQuery } from "./query.js";
import { chooseColumns, isTimes, shownOnTerminal } from "./table-fit.js";
import { needsJsonEscape, terminalJson, terminalText } from "./terminal-text.js";

export const FORMATS = ["table", "json", "ndjson", "csv", "yaml"] as const;
export type Format = (typeof FORMATS)[number];

export interface RenderOptions {
  format: Format;
  /** `--fields`: the keys to keep, dotted for nested ones */
  fields?: string[];
  /** the table columns of this kind of record when `--fields` is not given */
  columns?: string[];
  /** the terminal's columns; undefined or 0 (piped, or a terminal that cannot tell) sets no limit */
  width?: number;
  color: boolean;
  /**
   * stdout is a terminal: JSON, NDJSON and YAML escape the control characters their syntax
   * leaves raw (still the same data), CSV shows them in their visible form. Piped, every data
   * format is exact. Tables always show the visible form: they are for people.
   */
  terminal?: boolean;
  /** `--query`: a JMESPath expression applied to the selected data before it is rendered */
  query?: string;
  /** told which columns a list table shows, once chosen to fit (`audit tail -f` keeps them) */
  shown?: (columns: string[]) => void;
  /** CSV: false leaves the header out (a streamed list's later pages: its header came once, first) */
  header?: boolean;
}

type Row = Record<string, unknown>;

/** A record's own member: `constructor` is an attribute it may have, not the function every object has. */
const own = (record: Row, key: string): unknown => (Object.hasOwn(record, key) ? record[key] : undefined);

/**
 * The value at a dotted path; through an array, the values of its elements (`emails.value` is
 * every e-mail address), undefined when there are none.
 */
export function pick(value: unknown, path: string): unknown {
  const parts = path.split(".");
  const walk = (current: unknown, index: number): unknown => {
    if (index === parts.length) return current;
    if (Array.isArray(current)) {
      const values = current.map((element) => walk(element, index)).filter((v) => v !== undefined);
      return values.length > 0 ? values.flat() : undefined;
    }
    if (current === null || typeof current !== "object") return undefined;
    return walk(own(current as Row, parts[index] as string), index + 1);
  };
  return walk(value, 0);
}

/**
 * `--fields` keeps the record's shape: `name.givenName` stays nested, and `emails.value` keeps
 * each element with its `value` only, so JSON and YAML show the same selection as the columns.
 */
function projectValue(value: unknown, paths: string[][]): unknown {
  if (paths.some((path) => path.length === 0)) return value;
  if (Array.isArray(value)) {
    const elements = value.map((element) => projectValue(element, paths)).filter((v) => v !== undefined);
    return elements.length > 0 ? elements : undefined;
  }
  if (value === null || typeof value !== "object") return undefined;
  const kept: [string, unknown][] = [];
  for (const key of new Set(paths.map((path) => path[0] as string))) {
    const child = projectValue(
      own(value as Row, key),
      paths.filter((path) => path[0] === key).map((path) => path.slice(1)),
    );
    if (child !== undefined) kept.push([key, child]);
  }
  // fromEntries defines members, `__proto__` too, where an assignment would set the prototype
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

function project(record: unknown, fields: string[] | undefined): unknown {
  if (!fields || record === null || typeof record !== "object" || Array.isArray(record)) return record;
  return (
    projectValue(
      record,
      fields.map((field) => field.split(".")),
    ) ?? {}
  );
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "object") {
    if (Array.isArray(value) && value.every((v) => typeof v !== "object")) return value.join(", ");
    // SCIM multi-valued attributes (emails, roles): their values say enough in a cell
    if (Array.isArray(value) && value.every((v) => v && typeof v === "object" && "value" in v)) {
      return value.map((v) => String((v as { value: unknown }).value)).join(", ");
    }
    return JSON.stringify(value);
  }
  return String(value);
}

/** A record's row: an empty list says `none` (a summary's `failures: []`), not a blank. */
const recordCell = (value: unknown): string => (Array.isArray(value) && value.length === 0 ? "none" : cell(value));

function defaultColumns(rows: Row[]): string[] {
  const keys: string[] = [];
  for (const row of rows.slice(0, 20)) {
    for (const [key, value] of Object.entries(row)) {
      if (!keys.includes(key) && (value === null || typeof value !== "object")) keys.push(key);
    }
  }
  return keys.slice(0, 8);
}

/**
 * The columns a person copies into the next command or reads to act: never cut. Ids (`id`,
 * `…Id`), codes, keys and tokens (`code`, `consumerKey`, `token`), a user's user name and e-mail
 * (`users get USER` takes either), and an audit record's `time` and `action` (its `--until`
 * cursor and a `--filter` value).
 */
export const isIdentifier = (column: string) =>
  /(^|\.)(id|code|token|time|action)$|(Id|Key)$|^userName$|^emails(\.value)?$/.test(column);

/**
 * The columns the text takes on a terminal (escape sequences none, a wide character two; of
 * several lines, the widest), measured as cli-table3 measures its cells, so that both agree.
 */
export function displayWidth(text: string): number {
  return Math.max(0, ...text.split("\n").map((line) => stringWidth(line)));
}

/** Two spaces between columns, no borders and no rule under each row, as kubectl and gh print. */
const GAP = 2;
const COMPACT = {
  chars: {
    middle: " ".repeat(GAP),
    ...Object.fromEntries(
      [
        "top",
        "top-mid",
        "top-left",
        "top-right",
        "bottom",
        "bottom-mid",
        "bottom-left",
        "bottom-right",
        "left",
        "left-mid",
        "mid",
        "mid-mid",
        "right",
        "right-mid",
      ].map((name) => [name, ""]),
    ),
  } as Record<string, string>,
  style: { head: [], border: [], "padding-left": 0, "padding-right": 0, compact: true },
};

/**
 * Shrinks the widest column that may give way until the row fits the terminal. Identifier
 * columns keep their width: when the others are down to 5 characters the row is wider than the
 * terminal rather than an id cut. An unknown width (piped, or a terminal that reports 0 columns
 * as `script` and many CI and container terminals do) cuts nothing, as gh does when it cannot tell.
 */
export function fitWidths(natural: number[], width: number | undefined, fixed: boolean[] = []): number[] {
  const widths = natural.map((w) => Math.max(w, 1));
  if (!width || width <= 0) return widths;
  const budget = width - 1 - GAP * (widths.length - 1);
  let total = widths.reduce((a, b) => a + b, 0);
  while (total > budget) {
    const candidates = widths.map((w, i) => (fixed[i] || w <= 5 ? -1 : w));
    const widest = candidates.indexOf(Math.max(...candidates));
    if ((candidates[widest] ?? -1) < 0) break;
    widths[widest]! -= 1;
    total -= 1;
  }
  return widths;
}

const trimLines = (text: string) => `${text.replace(/ +$/gm, "")}\n`;

async function table(data: unknown, options: RenderOptions): Promise<string> {
  const { default: Table } = await import("cli-table3");
  const { Chalk } = await import("chalk");
  const chalk = new Chalk({ level: options.color ? 1 : 0 });
  if (Array.isArray(data) && !data.every(isRecord)) {
    // a --query result such as ["a","b"] or [["a",1]]: one line per element, cells tab-separated
    return data.map((element) => `${terminalText([element].flat().map(cell).join("\t"))}\n`).join("");
  }
  if (Array.isArray(data)) {
    if (data.length === 0) return "";
    const rows = data as Row[];
    const given = options.fields ?? options.columns ?? defaultColumns(rows);
    // on a terminal a moment is a relative time; piped, the exact ISO time
    const value = (c: string, v: unknown) => (options.terminal ? shownOnTerminal(c, v) : v);
    // one line per record: a newline in a value is shown, not laid out
    const cells = rows.map((row) => given.map((c) => terminalText(cell(value(c, pick(row, c))))));
    // the columns asked for by --fields are all shown; a command's own are chosen to fit
    const fits = given.map((c, i) => ({
      natural: Math.max(displayWidth(c), ...cells.map((r) => displayWidth(r[i] ?? ""))),
      empty: cells.every((r) => r[i] === ""),
      fixed: isIdentifier(c),
      whole: isTimes(cells.map((r) => r[i] ?? "")),
    }));
    const kept = options.fields ? given.map((_, i) => i) : chooseColumns(fits, options.width, GAP);
    const columns = kept.map((i) => given[i] as string);
    options.shown?.(columns);
    const head = columns.map((c) => terminalText(c));
    const body = cells.map((r) => kept.map((i) => r[i] ?? ""));
    const natural = head.map((c, i) => Math.max(displayWidth(c), ...body.map((r) => displayWidth(r[i] ?? ""))));
    const t = new Table({
      ...COMPACT,
      head: head.map((c) => chalk.bold(c)),
      colWidths: fitWidths(
        natural,
        options.width,
        kept.map((i) => fits[i]?.fixed || fits[i]?.whole),
      ),
      wordWrap: false,
    });
    t.push(...body);
    return trimLines(t.toString());
  }
  if (data !== null && typeof data === "object") {
    const entries = (
      options.fields ? options.fields.map((f) => [f, pick(data, f)] as const) : Object.entries(data as Row)
    ).map(([key, value]) => [terminalText(key), terminalText(recordCell(value), { newlines: true })] as const);
    const natural = [
      Math.max(...entries.map(([k]) => displayWidth(k))),
      Math.max(...entries.map(([, v]) => displayWidth(v))),
    ];
    // the names never give way; a long value wraps onto the lines below it, and the values are
    // never narrower than an identifier's (the record's id), which would be cut
    const [nameWidth, valueWidth] = fitWidths(natural, options.width, [true, false]) as [number, number];
    const identifiers = entries.filter(([key]) => isIdentifier(key)).map(([, value]) => displayWidth(value));
    const colWidths = [nameWidth, Math.max(valueWidth, ...identifiers)] as const;
    const t = new Table({ ...COMPACT, colWidths: [...colWidths], wordWrap: false });
    // a value wider than its column (a secret shown once, a URL, JSON) is broken onto the lines
    // below, inside a word if it must: cli-table3's word wrap cut such a word short with "…"
    const { default: wrapAnsi } = await import("wrap-ansi");
    for (const [key, value] of entries) {
      t.push([chalk.bold(key), wrapAnsi(value, colWidths[1], { hard: true, trim: false })]);
    }
    return trimLines(t.toString());
  }
  return `${terminalText(cell(data), { newlines: true })}\n`;
}

const isRecord = (value: unknown): value is Row => value !== null && typeof value === "object" && !Array.isArray(value);

/** A JSON number or boolean is no formula: it keeps its own text (-5 prints -5); any other text is neutralised. */
function csvCell(value: unknown): string {
  return typeof value === "number" || typeof value === "boolean" ? cell(value) : neutraliseCell(cell(value));
}

async function csv(data: unknown, options: RenderOptions): Promise<string> {
  const { stringify } = commonJs(await import("csv-stringify/sync"));
  // CSV has no escapes for control characters: on a terminal it is a display, piped it is data
  const shown = (text: string) => (options.terminal ? terminalText(text, { newlines: true }) : text);
  if (!(Array.isArray(data) ? data : [data]).every(isRecord)) {
    // a --query result of values or lists of values: one row each, no header
    const values = Array.isArray(data) ? data : [data];
    return stringify(values.map((element) => [element].flat().map((v) => shown(csvCell(v)))));
  }
  const rows = (Array.isArray(data) ? data : [data]) as Row[];
  const columns = options.fields ?? [...new Set(rows.flatMap((r) => Object.keys(r ?? {})))];
  return stringify(
    rows.map((row) => columns.map((c) => shown(csvCell(pick(row, c))))),
    // a header names keys, which --query can take from stored data (customFields)
    { header: options.header !== false, columns: columns.map((c) => shown(neutraliseCell(c))) },
  );
}

/**
 * YAML escapes C0 in double-quoted scalars but leaves DEL and C1 raw, and writes bidi controls
 * in plain scalars. On a terminal such strings are double-quoted and those characters escaped
 * as `\uXXXX`, which YAML reads back as the same characters.
 */
async function yaml(data: unknown, terminal: boolean): Promise<string> {
  const { Document, stringify, visit } = await importYaml();
  if (!terminal) return stringify(data);
  const document = new Document(data);
  visit(document, {
    Scalar(_key, node) {
      if (typeof node.value === "string" && needsJsonEscape(node.value)) node.type = "QUOTE_DOUBLE";
    },
  });
  return terminalJson(document.toString());
}

/**
 * One output format, as everything that prints reads it: the list printer (render), the streamed
 * printer (how pages join into the bytes of the whole list), exports and import summaries.
 */
export interface OutputFormat {
  render(data: unknown, options: RenderOptions): Promise<string>;
  /**
   * How a list read page by page is written: `whole` needs every row first (a table sizes its
   * columns), `concatenate` writes each page as it comes, `array` (JSON) opens one array and
   * joins the pages' elements into it, `header-once` (CSV) writes its header with the first page.
   */
  pages: "whole" | "concatenate" | "array" | "header-once";
  /** an import's summary is one document on stdout (counts and failures), not a line and rows */
  summaryAsDocument: boolean;
  /** records are flat rows of named columns: an export writes the columns `users import` reads */
  flatRows: boolean;
}

/** JSON.stringify(undefined) is undefined whatever its type says; on a terminal, control characters escaped. */
const jsonText = (text: string | undefined, options: RenderOptions) =>
  options.terminal && text !== undefined ? terminalJson(text) : `${text}`;

export const OUTPUT_FORMATS: Readonly<Record<Format, OutputFormat>> = {
  table: { render: table, pages: "whole", summaryAsDocument: false, flatRows: false },
  json: {
    render: async (data, options) => `${jsonText(JSON.stringify(data, null, 2), options)}\n`,
    pages: "array",
    summaryAsDocument: true,
    flatRows: false,
  },
  ndjson: {
    render: async (data, options) =>
      (Array.isArray(data) ? data : [data]).map((r) => `${jsonText(JSON.stringify(r), options)}\n`).join(""),
    pages: "concatenate",
    summaryAsDocument: false,
    flatRows: false,
  },
  csv: { render: csv, pages: "header-once", summaryAsDocument: false, flatRows: true },
  yaml: {
    render: (data, options) => yaml(data, Boolean(options.terminal)),
    pages: "concatenate",
    summaryAsDocument: true,
    flatRows: false,
  },
};

/** Renders command results: a table for people, JSON, NDJSON, CSV or YAML for programs. */
export async function render(data: unknown, options: RenderOptions): Promise<string> {
  let projected = Array.isArray(data) ? data.map((d) => project(d, options.fields)) : project(data, options.fields);
  if (options.query !== undefined) {
    projected = await applyQuery(options.query, projected);
    // the expression chose the shape: the command's columns and --fields no longer describe it
    options = { ...options, fields: undefined, columns: undefined };
  }
  return OUTPUT_FORMATS[options.format].render(projected, options);
}
