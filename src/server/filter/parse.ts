import type { Filter } from "scim2-parse-filter";
import * as parser from "scim2-parse-filter/lib/src/parser.js";
import { ProblemError } from "../problems.js";

export type { Filter } from "scim2-parse-filter";

export const MAX_FILTER_DEPTH = 32;
export const MAX_FILTER_LENGTH = 8192;

/** The library's token pattern, kept to map a token index back to a character position. */
const TOKEN =
  /^(?:(\s+)|(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![-\w._:/)\s]))|("(?:[^"\\]|\\.|\n)*")|([[()]|]\.?)|(\w[-\w._:/%]*))/;

/** Character offset (0-based) of every token, and of the end. */
function tokenOffsets(text: string): number[] {
  const offsets: number[] = [];
  let offset = 0;
  for (;;) {
    const match = TOKEN.exec(text.slice(offset));
    if (!match || match[0].length === 0) break;
    if (!match[1]) offsets.push(offset);
    offset += match[0].length;
  }
  offsets.push(offset);
  return offsets;
}

function invalidFilter(message: string, position: number): ProblemError {
  return new ProblemError("invalid_filter", `${message} (at position ${position + 1}).`, {
    errors: [{ path: "/query/filter", message: `${message} at position ${position + 1}` }],
    scimType: "invalidFilter",
  });
}

function maxDepth(text: string): { depth: number; at: number } {
  let depth = 0;
  let worst = { depth: 0, at: 0 };
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "(" || c === "[") {
      depth++;
      if (depth > worst.depth) worst = { depth, at: i };
    } else if (c === ")" || c === "]") depth--;
  }
  return worst;
}

/**
 * Parses a SCIM filter (RFC 7644 section 3.4.2.2) with scim2-parse-filter. Depth and length are
 * bounded first, so that hostile input costs little; a failure names its position.
 */
export function parseFilter(text: string): Filter {
  if (text.length > MAX_FILTER_LENGTH)
    throw invalidFilter(`The filter is longer than ${MAX_FILTER_LENGTH} characters`, MAX_FILTER_LENGTH);
  if (!text.trim()) throw invalidFilter("The filter is empty", 0);
  const nesting = maxDepth(text);
  if (nesting.depth > MAX_FILTER_DEPTH)
    throw invalidFilter(`The filter nests deeper than ${MAX_FILTER_DEPTH} levels`, nesting.at);
  let tokens: parser.Tokens;
  try {
    tokens = new parser.Tokens(parser.tokenizer(text));
  } catch {
    const offsets = tokenOffsets(text);
    throw invalidFilter("Unexpected character", offsets.at(-1) ?? 0);
  }
  const offsets = tokenOffsets(text);
  const positionOf = (index: number) => offsets[Math.min(index, offsets.length - 1)] ?? text.length;
  let filter: Filter;
  try {
    filter = parser.parseFilter(tokens);
  } catch {
    // the parser has consumed the offending token when it throws
    throw invalidFilter("Unexpected token", positionOf(Math.max(tokens.i - 1, 0)));
  }
  if (tokens.peek().type !== "EOT") throw invalidFilter("Unexpected token", positionOf(tokens.i));
  return filter;
}
