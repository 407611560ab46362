import { UsageError } from "./errors.js";

/** One operation of a SCIM PATCH (RFC 7644 section 3.5.2), as the CLI sends it. */
export interface PatchOperation {
  op: string;
  path?: string;
  value?: unknown;
}

const OP = /^(add|replace|remove)(?=$|[:=])/i;

/** Where the path ends: the first `=` outside the value filter's brackets and quoted strings. */
function pathEnd(text: string, from: number): number {
  let quoted = false;
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "[") depth++;
    else if (c === "]") depth--;
    else if (c === "=" && depth === 0) return i;
  }
  return text.length;
}

/**
 * `--op OP[:PATH][=VALUE]`: `replace:active=false`, `add:emails[type eq "work"].value=a@example.com`,
 * `remove:nickName`, `replace={"displayName":"Ada"}` (no path: an object of attributes). A value
 * that parses as JSON is JSON, as with `--set`; anything else is the text itself.
 */
export function parsePatchOperation(text: string): PatchOperation {
  const match = OP.exec(text);
  if (!match) {
    throw new UsageError(
      `--op '${text}' is not an operation.`,
      "write it as OP:PATH=VALUE, e.g. --op 'replace:active=false' (OP is add, replace or remove)",
    );
  }
  const op = (match[1] as string).toLowerCase();
  let at = match[0].length;
  let path: string | undefined;
  if (text[at] === ":") {
    const end = pathEnd(text, at + 1);
    path = text.slice(at + 1, end);
    if (!path) throw new UsageError(`--op '${text}' names no path after '${op}:'.`);
    at = end;
  }
  const hasValue = text[at] === "=";
  if (op !== "remove" && !hasValue) throw new UsageError(`--op '${text}' needs a value: ${op}:PATH=VALUE.`);
  if (op === "remove" && path === undefined) throw new UsageError(`--op '${text}': remove needs a path, remove:PATH.`);
  if (!hasValue) return { op, path: path as string };
  const raw = text.slice(at + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // not JSON: the text itself
  }
  if (path === undefined && (value === null || typeof value !== "object" || Array.isArray(value))) {
    throw new UsageError(`--op '${text}': without a path, the value is a JSON object of attributes.`);
  }
  return { op, ...(path !== undefined && { path }), value };
}
