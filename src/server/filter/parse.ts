import type { Filter } from "scim2-parse-filter";
import * as parser from "scim2-parse-filter/lib/src/parser.js";
import { ProblemError } from "../problem-error.js";

export type { Filter } from "scim2-parse-filter";

export const MAX_FILTER_DEPTH = 32;
export const MAX_FILTER_LENGTH = 8192;

/**
 * The library's token pattern with two corrections: a number is a number before a space or a
 * `)` too (the library's tokenizer fails on `capacity gt -5 and ...`), and a quoted string is
 * one JSON string (escape pairs are read as pairs, so `"a\\"` is `a\`).
 */
const TOKEN =
  /^(?:(\s+)|(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![-\w._:/%]))|("(?:[^"\\]|\\.)*")|([[()]|]\.?)|(\w[-\w._:/%]*))/;
const JSON_ESCAPE = /^(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/;

type Token = parser.Token & { offset: number };

/** Keeps JSON escapes; any other backslash stands for itself, as the library reads it. */
function quoted(literal: string): string {
  return literal.replace(/\\([\s\S])/g, (pair, next: string, at: number) =>
    JSON_ESCAPE.test(literal.slice(at + 1)) ? pair : `\\\\${next}`,
  );
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let offset = 0;
  while (offset < text.length) {
    const match = TOKEN.exec(text.slice(offset));
    if (!match || match[0].length === 0) throw invalidFilter("Unexpected character", offset);
    if (match[2]) tokens.push({ type: "Number", literal: match[2], offset });
    else if (match[3]) tokens.push({ type: "Quoted", literal: quoted(match[3]), offset });
    else if (match[4]) tokens.push({ type: "Bracket", literal: match[4], offset });
    else if (match[5]) tokens.push({ type: "Word", literal: match[5], offset });
    offset += match[0].length;
  }
  tokens.push({ type: "EOT", literal: "", offset: text.length });
  return tokens;
}

function invalidFilter(message: string, position: number): ProblemError {
  return new ProblemError("invalid_filter", `${message} (at position ${position + 1}).`, {
    errors: [{ path: "/query/filter", message: `${message} at position ${position + 1}` }],
    scimType: "invalidFilter",
  });
}

/**
 * The first token at which the nesting exceeds `MAX_FILTER_DEPTH`. Brackets nest, and so does a
 * run of `not`s: a `not` holds until the next `and`/`or` of its own level (`not not not x`
 * nests three deep, `not a and not b` one).
 */
function tooDeep(tokens: Token[]): Token | undefined {
  const nots: number[] = [0];
  let depth = 0;
  for (const token of tokens) {
    const word = token.type === "Word" ? token.literal.toLowerCase() : "";
    if (token.literal === "(" || token.literal === "[") {
      nots.push(0);
      depth++;
    } else if (token.type === "Bracket") {
      depth -= 1 + (nots.pop() ?? 0);
      if (nots.length === 0) nots.push(0);
    } else if (word === "not") {
      nots[nots.length - 1]++;
      depth++;
    } else if (word === "and" || word === "or") {
      depth -= nots[nots.length - 1];
      nots[nots.length - 1] = 0;
    }
    if (depth > MAX_FILTER_DEPTH) return token;
  }
  return undefined;
}

/**
 * Parses a SCIM filter (RFC 7644 section 3.4.2.2) with scim2-parse-filter. Length and depth are
 * bounded first, so that hostile input costs little; a failure names its position.
 */
export function parseFilter(text: string): Filter {
  if (text.length > MAX_FILTER_LENGTH)
    throw invalidFilter(`The filter is longer than ${MAX_FILTER_LENGTH} characters`, MAX_FILTER_LENGTH);
  if (!text.trim()) throw invalidFilter("The filter is empty", 0);
  const list = tokenize(text);
  const deep = tooDeep(list);
  if (deep) throw invalidFilter(`The filter nests deeper than ${MAX_FILTER_DEPTH} levels`, deep.offset);
  const tokens = new parser.Tokens(list);
  const positionOf = (index: number) => list[Math.min(index, list.length - 1)]?.offset ?? text.length;
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
