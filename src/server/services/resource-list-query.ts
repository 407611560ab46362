import type { Static } from "@sinclair/typebox";
import { CUSTOM_TYPE_PATTERN, LIST_COUNT, notATypeName, type ResourceListQuery } from "../../contract/resources.js";
import { attributePath } from "../filter/compile.js";
import { type Filter, parseFilter } from "../filter/parse.js";
import { invalid } from "../problem-error.js";

// The query of GET /Resources (and of a read by id): paging, order, types, filter.

const TYPE_NAME = new RegExp(CUSTOM_TYPE_PATTERN);

const queryInvalid = (detail: string, name: string) => invalid(detail, `/query/${name}`, "invalidValue");

export function parseTypes(resourcetypes: string | undefined): string[] | undefined {
  const types = resourcetypes
    ?.split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  for (const type of types ?? []) {
    if (!TYPE_NAME.test(type)) throw queryInvalid(notATypeName(type), "resourcetypes");
  }
  return types;
}

/** SCIM paging: startIndex below 1 means 1; count below 0 means 0 and above the maximum means the maximum. */
export function parseListQuery(query: Static<typeof ResourceListQuery>) {
  const startIndex = Math.max(query.startindex ?? 1, 1);
  const count = Math.min(Math.max(query.count ?? LIST_COUNT.default, 0), LIST_COUNT.max);
  const order = (query.sortorder ?? "ascending").toLowerCase();
  if (order !== "ascending" && order !== "descending") {
    throw queryInvalid("sortorder must be 'ascending' or 'descending'.", "sortorder");
  }
  const types = parseTypes(query.resourcetypes);
  if (query.sortby !== undefined && !/^[A-Za-z0-9_.:$-]{1,256}$/.test(query.sortby)) {
    throw queryInvalid("sortby must be an attribute path.", "sortby");
  }
  const filter = query.filter !== undefined ? parseFilter(query.filter) : undefined;
  return {
    search: parseSearch(query.search, types),
    startIndex,
    count,
    descending: order === "descending",
    types,
    filter,
    activeOnly: filter && activeOnly(filter),
    sortBy: query.sortby,
  };
}

/** A search's text, trimmed: of Users alone, and never blank (it would find every User). */
function parseSearch(search: string | undefined, types: string[] | undefined): string | undefined {
  if (search === undefined) return undefined;
  const text = search.trim();
  if (!text) throw queryInvalid("search needs some text to look for.", "search");
  if (types?.length !== 1 || types[0] !== "User") {
    throw queryInvalid("search looks among Users: give resourcetypes=User with it.", "search");
  }
  return text;
}

/** The boolean of a filter that is `active eq true|false` and nothing else: of Users, a kept count. */
function activeOnly(filter: Filter): boolean | undefined {
  if (filter.op !== "eq" || typeof filter.compValue !== "boolean") return undefined;
  const path = attributePath(filter.attrPath);
  return path.length === 1 && path[0] === "active" ? filter.compValue : undefined;
}

/** The types a read by id must be of; the rest of the list's query is checked as the list's is, and ignored. */
export function parseReadQuery(query: Static<typeof ResourceListQuery>): string[] | undefined {
  return parseListQuery(query).types;
}
