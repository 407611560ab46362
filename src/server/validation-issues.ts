import { CUSTOM_TYPE_PATTERN, notATypeName } from "../contract/resources.js";
import type { FieldIssue } from "./problem-error.js";

export interface AjvIssue {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}

/** What one branch of a union expected, in words: `a boolean`, `null`, `"accepted"`. */
function expected(issue: AjvIssue): string {
  const { type, format, allowedValue, allowedValues } = issue.params as Record<string, unknown>;
  if (issue.keyword === "type") {
    const names: Record<string, string> = {
      null: "null",
      integer: "a whole number",
      array: "a list",
      object: "an object",
      boolean: "a boolean",
    };
    return names[String(type)] ?? `a ${String(type)}`;
  }
  if (issue.keyword === "format") {
    if (format === "date-time") return "an RFC 3339 date-time such as 2027-01-10T09:00:00Z";
    if (format === "email") return "an e-mail address";
    return `a ${String(format)}`;
  }
  if (issue.keyword === "const") return JSON.stringify(allowedValue);
  if (issue.keyword === "enum") return (allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ");
  return `a value that ${issue.message ?? "is valid"}`;
}

/**
 * Ajv reports a failed union (`Nullable(Timestamp)`, a choice of literals) as one issue per
 * branch and then "must match a schema in anyOf". That becomes one issue that says what the
 * field expected: "must be an RFC 3339 date-time ... or null". When a branch failed deeper
 * inside the value (an attendee's e-mail), those deeper issues are the cause and stay instead.
 */
function collapseUnions(issues: AjvIssue[]): AjvIssue[] {
  const out: AjvIssue[] = [];
  for (const issue of issues) {
    if (issue.keyword !== "anyOf") {
      out.push(issue);
      continue;
    }
    const at = issue.instancePath;
    const branches: AjvIssue[] = [];
    while (out.length > 0 && (out.at(-1)!.instancePath === at || out.at(-1)!.instancePath.startsWith(`${at}/`))) {
      branches.unshift(out.pop()!);
    }
    const deeper = branches.filter((b) => b.instancePath !== at);
    if (deeper.length > 0) {
      out.push(...deeper);
      continue;
    }
    const words = [...new Set(branches.map(expected))];
    const message = `must be ${words.length > 2 ? `one of ${words.join(", ")}` : words.join(" or ")}`;
    out.push({ ...issue, keyword: "union", message });
  }
  return out;
}

/** A range's bound in words, `must be at most 100` rather than Ajv's `must be <= 100`. */
function bound(issue: AjvIssue): string | undefined {
  const limit = String(issue.params.limit);
  if (issue.keyword === "minimum") return `must be at least ${limit}`;
  if (issue.keyword === "maximum") return `must be at most ${limit}`;
  return undefined;
}

/** The value a JSON pointer names in the input (`/resourceType`), if there is one. */
function valueAt(input: unknown, pointer: string): unknown {
  let current = input;
  for (const part of pointer.split("/").slice(1)) {
    if (current === null || typeof current !== "object") return undefined;
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    current = Object.hasOwn(current, key) ? (current as Record<string, unknown>)[key] : undefined;
  }
  return current;
}

/** A resource type that is not a type name is told what one looks like, not the pattern. */
function patternWords(issue: AjvIssue, input: unknown): string | undefined {
  if (issue.keyword !== "pattern" || issue.params.pattern !== CUSTOM_TYPE_PATTERN) return undefined;
  const value = valueAt(input, issue.instancePath);
  const text = typeof value === "string" ? value : String(value);
  // the name is quoted back: a long one is cut, not echoed whole
  return notATypeName(text.length > 80 ? `${text.slice(0, 64)}…` : text);
}

/**
 * Ajv's issues as the problem document's `errors` (pointers into the body when `context` is
 * "body"); `input`, the part of the request they are about, lets a message quote the value.
 */
export function fieldIssues(context: string | undefined, validation: AjvIssue[], input?: unknown): FieldIssue[] {
  const location = context === "body" ? "" : `/${context === "querystring" ? "query" : (context ?? "")}`;
  return collapseUnions(validation).map((issue) => {
    const extra = issue.params.additionalProperty ?? issue.params.missingProperty;
    const path = `${location}${issue.instancePath}${extra !== undefined ? `/${String(extra)}` : ""}` || "/";
    const message =
      issue.keyword === "additionalProperties"
        ? `unknown field '${String(extra)}'`
        : issue.keyword === "required"
          ? `'${String(extra)}' is required`
          : (bound(issue) ?? patternWords(issue, input) ?? issue.message ?? "is not valid");
    return { path, message };
  });
}
