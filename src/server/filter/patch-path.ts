import { invalid } from "../problem-error.js";
import { type Filter, parseFilter } from "./parse.js";

// The "path" of a SCIM PATCH operation (RFC 7644 section 3.5.2): an attribute path, or a value
// path (an attribute, a value filter in brackets, and a sub-attribute after it). The filter in
// the brackets is read by the filter parser of parse.ts, the one GET filters use.

export interface PatchPath {
  /** the attribute with its schema URN prefix when given: `emails`, `name.givenName`, `urn:…:User:manager.value` */
  attribute: string;
  /** the filter of `attribute[…]` */
  filter?: Filter;
  /** the sub-attribute after the brackets: `value` in `emails[type eq "work"].value` */
  subAttribute?: string;
}

/** An attribute path: an optional schema URN, a name, an optional sub-attribute (`$ref` included). */
const ATTRIBUTE_PATH = /^(?:urn:[^\s"[\]]+:)?[A-Za-z$][\w$-]*(?:\.[A-Za-z$][\w$-]*)?$/;
const SUB_ATTRIBUTE = /^\.([A-Za-z$][\w$-]*)$/;
/** A whole extension as the target (`urn:…:enterprise:2.0:User`): its URN. */
const URN = /^urn:[^\s"[\]]+$/;

const invalidPath = (detail: string) => invalid(detail, "/path", "invalidPath");

/** Where the bracket opened at `open` closes, outside the filter's quoted strings. */
function closingBracket(text: string, open: number): number {
  let quoted = false;
  for (let i = open + 1; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "[") throw invalidPath("A value filter cannot hold another value filter.");
    else if (c === "]") return i;
  }
  throw invalidPath("The value filter's bracket is never closed.");
}

function hasValuePath(filter: Filter): boolean {
  if (filter.op === "[]") return true;
  if (filter.op === "and" || filter.op === "or") return filter.filters.some(hasValuePath);
  if (filter.op === "not") return hasValuePath(filter.filter);
  return false;
}

/**
 * Parses a PATCH path. A refusal is 400 `invalidPath` naming what is wrong; one inside the
 * brackets says it as the filter parser does, with its position in the filter.
 */
export function parsePatchPath(text: string): PatchPath {
  const path = text.trim();
  const open = path.indexOf("[");
  if (open < 0) {
    if (ATTRIBUTE_PATH.test(path) || URN.test(path)) return { attribute: path };
    throw invalidPath(`'${text}' is not an attribute path.`);
  }
  const attribute = path.slice(0, open);
  if (!ATTRIBUTE_PATH.test(attribute) || attribute.slice(attribute.lastIndexOf(":") + 1).includes(".")) {
    throw invalidPath(`'${attribute}' is not a multi-valued attribute a value filter can select from.`);
  }
  const close = closingBracket(path, open);
  const rest = path.slice(close + 1);
  const sub = SUB_ATTRIBUTE.exec(rest);
  if (rest !== "" && !sub) throw invalidPath(`'${rest}' after the value filter is not a sub-attribute.`);
  let filter: Filter;
  try {
    filter = parseFilter(path.slice(open + 1, close));
  } catch (error) {
    throw invalidPath(`The value filter of '${text}' is not valid: ${(error as Error).message}`);
  }
  if (hasValuePath(filter)) throw invalidPath("A value filter cannot hold another value filter.");
  return { attribute, filter, ...(sub && { subAttribute: sub[1] }) };
}
