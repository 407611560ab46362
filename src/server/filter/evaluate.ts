import type { Filter } from "scim2-parse-filter";
import { attributePath, invalidFilter, type Literal } from "./compile.js";

// A parsed filter evaluated on a value in memory, with the semantics compile.ts gives it in SQL:
// attribute names and strings compared case-insensitively, a multi-valued attribute matching when
// any value does, `ne` as "has no value equal to", `eq null` as "not present", a complex value
// compared by its `value`. PATCH selects the elements of a multi-valued attribute with it.

type Scalar = string | number | boolean;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The scalars at `path` under `value`; `value` of a scalar (an element of `tags`) is the scalar itself. */
function valuesAt(value: unknown, path: string[]): Scalar[] {
  if (Array.isArray(value)) return value.flatMap((item) => valuesAt(item, path));
  if (path.length === 0) {
    if (isObject(value)) return "value" in value ? valuesAt(value.value, []) : [];
    return value === null || value === undefined || value === "" ? [] : [value as Scalar];
  }
  if (!isObject(value)) return path.length === 1 && path[0] === "value" ? valuesAt(value, []) : [];
  const key = Object.keys(value).find((name) => name.toLowerCase() === path[0]);
  return key === undefined ? [] : valuesAt(value[key], path.slice(1));
}

/** Refuses what compile.ts refuses, whether or not any value is there to compare. */
function assertComparable(op: string, literal: Literal): void {
  if (typeof literal === "boolean" && op !== "eq") throw invalidFilter(`'${op}' cannot compare with a boolean.`);
  if (typeof literal === "number" && (op === "co" || op === "sw" || op === "ew")) {
    throw invalidFilter(`'${op}' needs a string.`);
  }
  if (literal === null) throw invalidFilter(`'${op}' cannot compare with null.`);
}

function compare(op: string, value: Scalar, literal: Exclude<Literal, null>): boolean {
  if (typeof literal === "boolean") return value === literal;
  if (typeof literal === "number") {
    if (typeof value !== "number") return false;
    return {
      eq: value === literal,
      gt: value > literal,
      ge: value >= literal,
      lt: value < literal,
      le: value <= literal,
    }[op as "eq"];
  }
  if (typeof value !== "string" || typeof literal !== "string") return false;
  const [a, b] = [value.toLowerCase(), literal.toLowerCase()];
  switch (op) {
    case "eq":
      return a === b;
    case "co":
      return a.includes(b);
    case "sw":
      return a.startsWith(b);
    case "ew":
      return a.endsWith(b);
    case "gt":
      return a > b;
    case "ge":
      return a >= b;
    case "lt":
      return a < b;
    default:
      return a <= b;
  }
}

/** Whether `value` (an element of a multi-valued attribute, or a resource) satisfies `filter`. */
export function matches(filter: Filter, value: unknown): boolean {
  switch (filter.op) {
    case "and":
      return filter.filters.every((inner) => matches(inner, value));
    case "or":
      return filter.filters.some((inner) => matches(inner, value));
    case "not":
      return !matches(filter.filter, value);
    case "[]": {
      const path = attributePath(filter.attrPath);
      const key = isObject(value) ? Object.keys(value).find((name) => name.toLowerCase() === path[0]) : undefined;
      const elements = key === undefined ? [] : (value as Record<string, unknown>)[key];
      return (Array.isArray(elements) ? elements : [elements]).some((element) => matches(filter.valFilter, element));
    }
    case "pr":
      return valuesAt(value, attributePath(filter.attrPath)).length > 0;
    default: {
      const values = valuesAt(value, attributePath(filter.attrPath));
      const literal = filter.compValue;
      if (literal === null && (filter.op === "eq" || filter.op === "ne")) {
        return filter.op === "eq" ? values.length === 0 : values.length > 0;
      }
      assertComparable(filter.op, literal);
      const given = literal as Exclude<Literal, null>;
      if (filter.op === "ne") return !values.some((item) => compare("eq", item, given));
      return values.some((item) => compare(filter.op, item, given));
    }
  }
}
