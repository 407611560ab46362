import type { FieldIssue } from "../problem-error.js";

/**
 * A lone UTF-16 surrogate written as a JSON escape. A body that decoded as UTF-8 holds no
 * surrogate in its text, so an escape is the only way one reaches the parsed value.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

const LONE_SURROGATE =
  "holds a lone UTF-16 surrogate (such as \\ud800 without its pair), which is not Unicode text; send well-formed text";

/** RFC 6901: `~` and `/` in a member name are escaped in a JSON Pointer. */
const pointerPart = (name: string) => name.replace(/~/g, "~0").replace(/\//g, "~1");

function find(value: unknown, pointer: string): FieldIssue | undefined {
  if (typeof value === "string") {
    return value.isWellFormed() ? undefined : { path: pointer || "/", message: `the text ${LONE_SURROGATE}` };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = find(value[i], `${pointer}/${i}`);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === "object") {
    for (const [name, member] of Object.entries(value)) {
      if (!name.isWellFormed()) return { path: pointer || "/", message: `a member name ${LONE_SURROGATE}` };
      const found = find(member, `${pointer}/${pointerPart(name)}`);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Where the parsed JSON `value` of the body `text` holds a string or a member name that is not
 * well-formed Unicode, if anywhere. No database keeps a lone surrogate (SQLite stored U+FFFD in
 * its place; PostgreSQL's jsonb refuses it) and RFC 7493 (I-JSON) rules it out, so such a body is
 * refused. Only a body with a surrogate escape is walked: the others cost one scan of the text.
 */
export function illFormedText(text: string, value: unknown): FieldIssue | undefined {
  return SURROGATE_ESCAPE.test(text) ? find(value, "") : undefined;
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The first query parameter of `url` whose percent-escapes do not decode as UTF-8 (`%FF`, an
 * overlong `%C0%AE`, a surrogate `%ED%A0%80`), as the problem names it. Fastify's parser keeps
 * such a value undecoded, so it would be read as the escapes' own characters. A URL without `%`
 * in its query is not looked at further.
 */
export function undecodableQuery(url: string): FieldIssue | undefined {
  const start = url.indexOf("?");
  if (start === -1 || url.indexOf("%", start) === -1) return undefined;
  for (const pair of url.slice(start + 1).split("&")) {
    if (!pair.includes("%") || decodes(pair.replace(/\+/g, " "))) continue;
    const rawName = pair.split("=", 1)[0] as string;
    const name = decodes(rawName) ? decodeURIComponent(rawName.replace(/\+/g, " ")) : undefined;
    return {
      path: name === undefined ? "/query" : `/query/${pointerPart(name)}`,
      message: `the query parameter ${name === undefined ? "name" : `'${name}'`} does not decode as UTF-8: its percent-escapes must encode UTF-8 text (%FF alone, %C0%AE or %ED%A0%80 do not)`,
    };
  }
  return undefined;
}
