import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import { SCHEMA_URN, USER_ACCOUNT_STATE, UserInput } from "../contract/resources.js";
import { renameColumns, userNameFromEmail } from "./column-maps.js";
import { restoreCell } from "./csv-cells.js";
import { UsageError } from "./errors.js";
import type { IO } from "./io.js";
import { commonJs } from "./lazy-modules.js";

type Attributes = Record<string, unknown>;

export { parseRenames, renameColumns, userNameFromEmail } from "./column-maps.js";

/**
 * One record of a users file: the User it describes, or why it describes none; `line` is where
 * it starts in the file (1-based, the CSV header being line 1).
 */
export type UserLine = { line: number; user: Attributes } | { line: number; error: string; userName?: string };

export type UsersFormat = "csv" | "ndjson";

const ENTERPRISE_PREFIX = `${SCHEMA_URN.enterpriseUser}:`;
const KNOWN = new Set(Object.keys(UserInput.properties));
/** What `users export` leaves out and `users import` refuses: assigned by the server, or secret. */
const NOT_IMPORTED = new Set(["id", "meta", "schemas", "firstLogin", "consumerSecret", ...USER_ACCOUNT_STATE]);
const BOOLEAN_LEAVES = new Set(["active", "primary"]);

const CLEAR_PASSWORD =
  "users import never reads a password in clear from a file: leave the password out (the users then set one through --invite or a reset link), or give the other system's bcrypt or argon2id hash as passwordHash";

/** A column name as a path: `name.givenName` → [name, givenName], `emails[0].value` → [emails, 0, value]. */
export function columnPath(column: string): (string | number)[] {
  const name = column.startsWith(ENTERPRISE_PREFIX) ? column.slice(ENTERPRISE_PREFIX.length) : column;
  const path: (string | number)[] = [];
  for (const part of name.split(".")) {
    const match = /^([^[\]]+)((?:\[[0-9]{1,2}\])*)$/.exec(part);
    if (!match)
      throw new UsageError(`The column '${column}' is not an attribute path (name.givenName, emails[0].value).`);
    path.push(match[1] as string);
    for (const index of (match[2] as string).matchAll(/\[([0-9]+)\]/g)) path.push(Number(index[1]));
  }
  return path;
}

/** Refuses a header that names a password in clear, an attribute a User does not have, or one the server assigns. */
export function checkColumns(columns: string[]): void {
  for (const column of columns) {
    const top = String(columnPath(column)[0]);
    if (top === "password") throw new UsageError(`The column '${column}' holds passwords: ${CLEAR_PASSWORD}.`);
    if (NOT_IMPORTED.has(top)) throw new UsageError(`The column '${column}' is assigned by the server; remove it.`);
    if (top === "resourceType")
      throw new UsageError(`'users import' imports Users only; remove the column '${column}'.`);
    if (!KNOWN.has(top)) {
      throw new UsageError(
        `The column '${column}' is not a User attribute.`,
        "rename it with --map OLD=NEW, or remove it (see 'users import --help' for the header convention)",
      );
    }
  }
}

function booleanOf(text: string, column: string): boolean {
  const lower = text.trim().toLowerCase();
  if (["true", "1", "yes"].includes(lower)) return true;
  if (["false", "0", "no"].includes(lower)) return false;
  throw new Error(`${column} must be true or false (it is '${text}')`);
}

/**
 * Sets the value at `path`, creating what is missing. A column names own members only, defined
 * rather than assigned: `name.__proto__.x` is a member `__proto__` of the name, never the
 * prototype of every object.
 */
function setPath(target: Attributes, path: (string | number)[], value: unknown): void {
  let current: Record<string | number, unknown> = target;
  path.forEach((key, index) => {
    const last = index === path.length - 1;
    const existing = Object.hasOwn(current, key) ? current[key] : undefined;
    const next = last ? value : (existing ?? (typeof path[index + 1] === "number" ? [] : {}));
    if (next !== existing)
      Object.defineProperty(current, key, { value: next, enumerable: true, writable: true, configurable: true });
    current = next as Record<string | number, unknown>;
  });
}

/** A CSV row as a User: empty cells are absent; `roles` is a list (`admin;support`); booleans are true/false. */
export function userFromRow(row: Record<string, string>): Attributes {
  const user: Attributes = {};
  for (const [column, cell] of Object.entries(row)) {
    if (cell === "") continue;
    const path = columnPath(column);
    const leaf = path[path.length - 1];
    let value: unknown = cell;
    if (path.length === 1 && leaf === "roles") {
      value = cell
        .split(/[;,]/)
        .map((role) => role.trim())
        .filter(Boolean)
        .map((role, index) => ({ value: role, primary: index === 0 }));
    } else if (typeof leaf === "string" && BOOLEAN_LEAVES.has(leaf)) {
      value = booleanOf(cell, column);
    }
    setPath(user, path, value);
  }
  // sparse arrays (emails[1] without emails[0]) keep only what was given
  for (const [key, value] of Object.entries(user)) {
    if (Array.isArray(value)) user[key] = value.filter((element) => element !== undefined);
  }
  return user;
}

/**
 * The spellings of a column that HR systems and other directories export (Auth0's and Keycloak's
 * imports take them as they are), by their letters in lower case (`First Name`, `first_name` and
 * `firstName` are `firstname`), and the attribute path each means. Read only where the column
 * names no attribute itself and `--map` did not rename it.
 */
const COMMON_HEADERS: Record<string, string> = {
  username: "userName",
  email: "emails[0].value",
  mail: "emails[0].value",
  emailaddress: "emails[0].value",
  firstname: "name.givenName",
  givenname: "name.givenName",
  lastname: "name.familyName",
  familyname: "name.familyName",
  surname: "name.familyName",
  role: "roles",
  externalid: "externalId",
  department: "department",
  title: "title",
  jobtitle: "title",
  manager: "manager.displayName",
  active: "active",
  displayname: "displayName",
  phone: "phoneNumbers[0].value",
  phonenumber: "phoneNumbers[0].value",
  mobile: "phoneNumbers[0].value",
  employeeid: "employeeNumber",
};

/** Every User attribute by its letters in lower case: `Title`, `COST CENTER` and `cost_center` name theirs. */
const KNOWN_BY_SPELLING = new Map([...KNOWN].map((name) => [name.toLowerCase(), name]));

/** A column's spelling as COMMON_HEADERS knows it: lower case, without spaces, `_` or `-`. */
const spelling = (column: string) => column.toLowerCase().replace(/[\s_-]+/g, "");

/** Whether a column names a User attribute as it is (`userName`, `name.givenName`). */
function isAttributePath(column: string): boolean {
  try {
    return KNOWN.has(String(columnPath(column)[0]));
  } catch {
    return false;
  }
}

/** The attribute path a column names in any case or common spelling, or undefined. */
function commonPath(column: string): string | undefined {
  if (isAttributePath(column)) return undefined;
  const letters = spelling(column);
  return COMMON_HEADERS[letters] ?? KNOWN_BY_SPELLING.get(letters);
}

/**
 * The header with each common spelling (and each attribute name in another case) read as its
 * attribute path; `renamed` tells which became what. Two columns that become the same attribute
 * are refused (exit 2, before anything is read): which of them holds the value is a guess.
 */
export function readCommonHeaders(
  columns: string[],
  /** the header as the file has it, before --map: what an error names */
  original: string[] = columns,
): { columns: string[]; renamed: [string, string][] } {
  const renamed: [string, string][] = [];
  const result = columns.map((column) => {
    const path = commonPath(column);
    if (path === undefined) return column;
    renamed.push([column, path]);
    return path;
  });
  const firstOf = new Map<string, string>();
  result.forEach((path, index) => {
    const column = original[index] as string;
    const other = firstOf.get(path.toLowerCase());
    if (other !== undefined) {
      throw new UsageError(
        `The columns '${other}' and '${column}' both read as ${path}: keep one, or rename one with --map COLUMN=attribute.`,
      );
    }
    firstOf.set(path.toLowerCase(), column);
  });
  return { columns: result, renamed };
}

function openInput(io: IO, file: string): Readable {
  if (file === "-") return io.stdin as Readable;
  const stream = createReadStream(file);
  return stream;
}

/** The format of a file: by its extension, else by its first character (`{` is NDJSON). */
export function formatOf(file: string, firstChar: string | undefined): UsersFormat {
  if (/\.csv$/i.test(file)) return "csv";
  if (/\.(ndjson|jsonl|json)$/i.test(file)) return "ndjson";
  return firstChar === "{" ? "ndjson" : "csv";
}

/** Reads the first chunk to tell the format, then gives it back in front of the rest. */
async function peek(input: Readable): Promise<{ first: string | undefined; stream: AsyncIterable<Buffer> }> {
  const iterator = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head = await iterator.next();
  const firstChunk = head.done ? undefined : Buffer.from(head.value);
  const text = firstChunk
    ?.toString("utf8")
    .replace(/^\uFEFF/, "")
    .trimStart();
  async function* all() {
    if (firstChunk) yield firstChunk;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield Buffer.from(next.value);
    }
  }
  return { first: text?.[0], stream: all() };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A member-renamed User of NDJSON or JSON, or why it is none. */
function objectLine(line: number, value: unknown, renames: Map<string, string>): UserLine {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { line, error: "not a JSON object" };
  const user = Object.fromEntries(
    Object.entries(value as Attributes)
      .map(([key, inner]) => [renames.get(key) ?? key, inner] as const)
      .filter(([key]) => !NOT_IMPORTED.has(key) && key !== "resourceType"),
  );
  const userName = typeof user.userName === "string" ? user.userName : undefined;
  if ("password" in user) return { line, error: CLEAR_PASSWORD, ...(userName && { userName }) };
  return { line, user: userNameFromEmail(user) };
}

async function* jsonArrayLines(stream: AsyncIterable<Buffer>, renames: Map<string, string>): AsyncGenerator<UserLine> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  let value: unknown;
  try {
    value = JSON.parse(
      Buffer.concat(chunks)
        .toString("utf8")
        .replace(/^\uFEFF/, ""),
    );
  } catch (error) {
    throw new UsageError(`The file is not JSON: ${describe(error)}`);
  }
  if (!Array.isArray(value)) throw new UsageError("A JSON file holds an array of Users ([{…}, …]).");
  for (const [index, element] of value.entries()) yield objectLine(index + 1, element, renames);
}

async function* ndjsonLines(stream: AsyncIterable<Buffer>, renames: Map<string, string>): AsyncGenerator<UserLine> {
  const [{ Readable }, { createInterface }] = await Promise.all([import("node:stream"), import("node:readline")]);
  const lines = createInterface({ input: Readable.from(stream), crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  for await (const raw of lines) {
    line++;
    const text = (line === 1 ? raw.replace(/^\uFEFF/, "") : raw).trim();
    if (!text) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      yield { line, error: `not JSON: ${describe(error)}` };
      continue;
    }
    yield objectLine(line, value, renames);
  }
}

async function* csvLines(
  stream: AsyncIterable<Buffer>,
  renames: Map<string, string>,
  onHeader?: (renamed: [string, string][]) => void,
): AsyncGenerator<UserLine> {
  const { parse } = commonJs(await import("csv-parse"));
  let header: string[] | undefined;
  let fromEmail = false;
  const parser = parse({
    bom: true,
    // each cell, the header's too, loses the `'` our CSV output puts before a formula trigger
    cast: restoreCell,
    relax_column_count: true,
    skip_empty_lines: true,
    info: true,
  });
  const { Readable } = await import("node:stream");
  Readable.from(stream).pipe(parser);
  // where the previous record ended: the next one starts after it (and after any empty lines)
  let endedAt = 0;
  let emptyLines = 0;
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[];
      info: { lines: number; empty_lines: number };
    }>) {
      const line = endedAt + 1 + (info.empty_lines - emptyLines);
      endedAt = info.lines;
      emptyLines = info.empty_lines;
      if (!header) {
        const original = record.map((column) => column.trim());
        const common = readCommonHeaders(renameColumns(original, renames), original);
        header = common.columns;
        checkColumns(header);
        onHeader?.(common.renamed);
        if (!header.includes("userName") && header.includes("emails[0].value")) {
          fromEmail = true;
          onHeader?.([["emails[0].value", "userName (no user-name column)"]]);
        }
        continue;
      }
      if (record.length !== header.length) {
        yield { line, error: `has ${record.length} field(s); the header has ${header.length}` };
        continue;
      }
      const row = Object.fromEntries(header.map((column, index) => [column, record[index] ?? ""]));
      try {
        const user = userFromRow(row);
        yield { line, user: fromEmail ? userNameFromEmail(user) : user };
      } catch (error) {
        yield { line, error: describe(error), ...(row.userName && { userName: row.userName }) };
      }
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // a quote never closed: nothing after it can be read as records
    const at = (error as { lines?: number }).lines;
    yield { line: at ?? endedAt + 1, error: `not CSV from here on: ${describe(error)}` };
  }
  if (!header) throw new UsageError("The file is empty: a CSV file starts with a header line (userName,…).");
}

/** The users of a CSV or NDJSON file ('-' for stdin), one at a time, in constant memory. */
export async function* readUsers(
  io: IO,
  file: string,
  options: {
    renames: Map<string, string>;
    format?: UsersFormat;
    /** the CSV columns read by a common spelling, each with the attribute it became */
    onHeader?: (renamed: [string, string][]) => void;
  },
): AsyncGenerator<UserLine> {
  let input: Readable;
  try {
    input = openInput(io, file);
    if (file !== "-") await new Promise((resolve, reject) => input.once("open", resolve).once("error", reject));
  } catch (error) {
    throw new UsageError(`Cannot read ${file}: ${describe(error)}`);
  }
  const { first, stream } = await peek(input);
  // an empty input holds no users: `users export --filter … | users import -` when nothing matched
  if (first === undefined) return;
  // a JSON array of Users (`[{…}, …]`) is read whole; its elements number as lines from 1
  if (first === "[" && options.format !== "csv") {
    yield* jsonArrayLines(stream, options.renames);
    return;
  }
  const format = options.format ?? formatOf(file, first);
  yield* format === "csv" ? csvLines(stream, options.renames, options.onHeader) : ndjsonLines(stream, options.renames);
}

/** The columns `users export` writes as CSV, in this order; NDJSON carries every attribute. */
export const EXPORT_COLUMNS = [
  "userName",
  "externalId",
  "displayName",
  "name.givenName",
  "name.middleName",
  "name.familyName",
  "name.honorificPrefix",
  "name.honorificSuffix",
  "nickName",
  "title",
  "userType",
  "preferredLanguage",
  "locale",
  "timezone",
  "active",
  "roles",
  "emails[0].value",
  "emails[0].type",
  "emails[1].value",
  "emails[1].type",
  "phoneNumbers[0].value",
  "phoneNumbers[0].type",
  "employeeNumber",
  "costCenter",
  "organization",
  "division",
  "department",
  "manager.value",
  "manager.displayName",
];

/** A User as `users import` reads it back: without what the server assigns, and without any secret. */
export function exportedUser(user: Attributes): Attributes {
  return Object.fromEntries(
    Object.entries(user).filter(
      ([key]) => !NOT_IMPORTED.has(key) && key !== "resourceType" && key !== "password" && key !== "passwordHash",
    ),
  );
}

/**
 * A User as a CSV row of EXPORT_COLUMNS: the output's column picker walks dotted paths, so an
 * `emails[0]` column is an `emails[0]` member holding the first address; roles join with ';'.
 */
export function csvRow(user: Attributes): Attributes {
  const row: Attributes = { ...exportedUser(user) };
  for (const key of ["emails", "phoneNumbers"]) {
    const list = Array.isArray(user[key]) ? (user[key] as unknown[]) : [];
    list.forEach((element, index) => {
      row[`${key}[${index}]`] = element;
    });
  }
  if (Array.isArray(user.roles)) {
    row.roles = (user.roles as { value?: unknown }[]).map((role) => String(role.value)).join(";");
  }
  return row;
}
