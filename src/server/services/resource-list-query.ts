import { CUSTOM_TYPE_PATTERN, LIST_COUNT } from "../../contract/resources.js";
import { parseFilter } from "../filter/parse.js";
import { invalid } from "../problem-error.js";

// The query of GET /Resources (and the resourcetypes of a read by id): paging, order, types, filter.

export interface ListQuery {
  resourcetypes?: string;
  filter?: string;
  sortby?: string;
  sortorder?: string;
  startindex?: string;
  count?: string;
}

const TYPE_NAME = new RegExp(CUSTOM_TYPE_PATTERN);

const queryInvalid = (detail: string, name: string) => invalid(detail, `/query/${name}`, "invalidValue");

function parseInteger(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?[0-9]{1,9}$/.test(value)) throw queryInvalid(`${name} must be an integer.`, name);
  return Number(value);
}

/** SCIM paging: startIndex below 1 means 1; count below 0 means 0 and above the maximum means the maximum. */
export function parseListQuery(query: ListQuery) {
  const startIndex = Math.max(parseInteger(query.startindex, "startindex") ?? 1, 1);
  const count = Math.min(Math.max(parseInteger(query.count, "count") ?? LIST_COUNT.default, 0), LIST_COUNT.max);
  const order = (query.sortorder ?? "ascending").toLowerCase();
  if (order !== "ascending" && order !== "descending") {
    throw queryInvalid("sortorder must be 'ascending' or 'descending'.", "sortorder");
  }
  const types = query.resourcetypes
    ?.split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  for (const type of types ?? []) {
    if (!TYPE_NAME.test(type)) throw queryInvalid(`'${type}' is not a resource type name.`, "resourcetypes");
  }
  if (query.sortby !== undefined && !/^[A-Za-z0-9_.:$-]{1,256}$/.test(query.sortby)) {
    throw queryInvalid("sortby must be an attribute path.", "sortby");
  }
  const filter = query.filter !== undefined ? parseFilter(query.filter) : undefined;
  return { startIndex, count, descending: order === "descending", types, filter, sortBy: query.sortby };
}
