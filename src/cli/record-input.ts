import { readFile } from "node:fs/promises";
import type { TSchema } from "@sinclair/typebox";
import { UsageError } from "./errors.js";
import { type IO, readStdin } from "./io.js";
import { commonJs, importYaml } from "./lazy-modules.js";

export type Record_ = Record<string, unknown>;

/** `--set key=value`: dotted keys build nested objects; a value that parses as JSON is JSON. */
export function parseSetPairs(pairs: string[]): Record_ {
  const out: Record_ = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--set expects key=value, got '${pair}'.`);
    const path = pair.slice(0, eq).split(".");
    if (path.some((p) => !p || p === "__proto__" || p === "constructor" || p === "prototype")) {
      throw new UsageError(`--set key '${pair.slice(0, eq)}' is not a valid path.`);
    }
    const raw = pair.slice(eq + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // not JSON: the text itself
    }
    let target = out;
    for (const key of path.slice(0, -1)) {
      if (typeof target[key] !== "object" || target[key] === null) target[key] = {};
      target = target[key] as Record_;
    }
    target[path.at(-1) as string] = value;
  }
  return out;
}

/** `--file F` (JSON or YAML; `-` for stdin): one record. */
export async function readRecordFile(io: IO, file: string): Promise<Record_> {
  let text: string;
  try {
    text = file === "-" ? await readStdin(io) : await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  if (!text.trim()) throw new UsageError(`${file === "-" ? "stdin" : file} is empty; expected a JSON or YAML record.`);
  const { parse } = await importYaml();
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    throw new UsageError(`${file === "-" ? "stdin" : file} is neither JSON nor YAML: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new UsageError(`${file === "-" ? "stdin" : file} must hold one object.`);
  }
  return value as Record_;
}

/** Deep merge for update: objects merge key by key, anything else replaces. */
export function merge(base: Record_, patch: Record_): Record_ {
  const out: Record_ = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    const current = out[key];
    out[key] =
      value &&
      typeof value === "object" &&
      !Array.isArray(value) &&
      current &&
      typeof current === "object" &&
      !Array.isArray(current)
        ? merge(current as Record_, value as Record_)
        : value;
  }
  return out;
}

export async function recordFromOptions(io: IO, options: { set?: string[]; file?: string }): Promise<Record_> {
  const fromFile = options.file ? await readRecordFile(io, options.file) : {};
  return merge(fromFile, parseSetPairs(options.set ?? []));
}

/**
 * Many records from a file or stdin (`-`): a JSON or YAML array, or NDJSON (one object a line).
 */
export async function readRecordsFile(io: IO, file: string): Promise<Record_[]> {
  const name = file === "-" ? "stdin" : file;
  let text: string;
  try {
    text = file === "-" ? await readStdin(io) : await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  if (!text.trim()) throw new UsageError(`${name} is empty; expected a JSON or YAML array, or NDJSON.`);
  let value: unknown;
  const lines = text.split(/\r?\n/).filter((line) => line.trim());
  if (lines.length > 1 && lines.every((line) => line.trim().startsWith("{"))) {
    value = lines.map((line, index) => {
      try {
        return JSON.parse(line);
      } catch (error) {
        throw new UsageError(`${name} line ${index + 1} is not JSON: ${(error as Error).message}`);
      }
    });
  } else {
    const { parse } = await importYaml();
    try {
      value = parse(text);
    } catch (error) {
      throw new UsageError(`${name} is neither JSON, NDJSON nor YAML: ${(error as Error).message}`);
    }
  }
  const records = Array.isArray(value) ? value : [value];
  records.forEach((record, index) => {
    if (record === null || typeof record !== "object" || Array.isArray(record)) {
      throw new UsageError(`${name}: item ${index + 1} is not an object.`);
    }
  });
  return records as Record_[];
}

/**
 * A prompt's check of one field against the contract's schema for it, with the server's own
 * validator (ajv and its formats), so that an answer the server would refuse (`tomorrow` for a
 * date-time) is refused at the prompt, which asks again with the typed text kept.
 */
export async function fieldValidator(schema: TSchema, field: string): Promise<(answer: string) => true | string> {
  const property = (schema.properties as Record<string, TSchema> | undefined)?.[field];
  if (!property) return (answer) => (answer.trim() ? true : "required");
  const [ajvModule, formats] = await Promise.all([import("ajv"), import("ajv-formats")]);
  const ajv = new (commonJs(ajvModule).Ajv)({ strict: false, allErrors: false });
  // the CommonJS export is the plugin itself, bundled or not
  (formats.default as unknown as (instance: typeof ajv) => void)(ajv);
  const check = ajv.compile(property);
  return (answer) => {
    if (!answer.trim()) return "required";
    if (check(answer)) return true;
    const issue = check.errors?.[0];
    if (issue?.keyword === "format" && issue.params.format === "date-time") {
      return "must be an RFC 3339 date-time such as 2027-01-10T09:00:00Z";
    }
    return `${field} ${issue?.message ?? "is not valid"}`;
  };
}
