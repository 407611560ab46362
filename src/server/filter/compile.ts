import { type RawBuilder, sql } from "kysely";
import type { Filter } from "scim2-parse-filter";
import { ProblemError } from "../problem-error.js";

export type Literal = string | number | boolean | null;
export type Condition = RawBuilder<unknown>;
type Comparison = "eq" | "co" | "sw" | "ew" | "gt" | "ge" | "lt" | "le";

/** How one stored value is seen by SQL: its kind and its lower-cased text or its number. */
export interface ValueColumns {
  /** a SQL expression giving 's', 'n' or 'b'; or the kind itself when a column has one type */
  kind: RawBuilder<unknown> | "s" | "n" | "b";
  text: RawBuilder<unknown>;
  num: RawBuilder<unknown>;
  /** the stored text keeps its case (ids, timestamps): the literal is not lower-cased either */
  caseExact?: boolean;
  /**
   * Told the text a `co` or `ew` comparison looks for (a LIKE with a leading wildcard, which no
   * btree answers), so that the target may read the rows that contain it from an index of its own
   */
  onContains?: (text: string) => void;
}

/**
 * Where the attributes of one kind of record live. `some` answers whether the record has a value
 * at `path` for which `predicate` holds (any value, for a multi-valued attribute); `element`
 * answers whether some element of the multi-valued attribute `path` satisfies `inner`.
 */
export interface FilterTarget {
  some(path: string[], predicate: (value: ValueColumns) => Condition, scope?: unknown): Condition;
  element(path: string[], inner: (scope: unknown) => Condition, scope?: unknown): Condition;
  /** whether the record has a non-empty value at `path` or, for a complex attribute, under it (`pr`) */
  present?(path: string[], scope?: unknown): Condition;
  /** literals of some attributes are normalised before comparison (timestamps) */
  normalize?(path: string[], literal: Literal): Literal;
}

export function invalidFilter(message: string): ProblemError {
  return new ProblemError("invalid_filter", message, {
    errors: [{ path: "/query/filter", message }],
    scimType: "invalidFilter",
  });
}

/** The kind of value a literal is: text, a number or a boolean. */
export const literalKind = (literal: string | number | boolean): "s" | "n" | "b" =>
  typeof literal === "string" ? "s" : typeof literal === "number" ? "n" : "b";

/** A comparison of an attribute with a literal of another kind, which could match nothing. */
export function wrongKind(name: string, kind: "s" | "n" | "b", literal: Literal): ProblemError {
  const shown = JSON.stringify(literal);
  if (kind === "b") return invalidFilter(`'${name}' is true or false, not ${shown}.`);
  if (kind === "n") return invalidFilter(`'${name}' is a number, not ${shown}.`);
  return invalidFilter(`'${name}' is text: compare it with a quoted string, not ${shown}.`);
}

/** Attribute names are case-insensitive; a schema URN prefix is dropped. */
export function attributePath(attrPath: string): string[] {
  const colon = attrPath.lastIndexOf(":");
  const name = colon >= 0 ? attrPath.slice(colon + 1) : attrPath;
  return name.split(".").map((p) => p.toLowerCase());
}

export const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The SCIM comparison of one stored value with one literal (strings compare case-insensitively). */
function compare(op: Comparison, value: ValueColumns, literal: Literal): Condition {
  const kindIs = (kind: "s" | "n" | "b") =>
    typeof value.kind === "string" ? (value.kind === kind ? sql`1=1` : sql`1=0`) : sql`${value.kind} = ${kind}`;
  if (typeof literal === "boolean") {
    if (op !== "eq") throw invalidFilter(`'${op}' cannot compare with a boolean.`);
    return sql`(${kindIs("b")} and ${value.text} = ${String(literal)})`;
  }
  if (typeof literal === "number") {
    if (op === "co" || op === "sw" || op === "ew") throw invalidFilter(`'${op}' needs a string.`);
    const operator = { eq: "=", gt: ">", ge: ">=", lt: "<", le: "<=" }[op];
    return sql`(${kindIs("n")} and ${value.num} ${sql.raw(operator)} ${literal})`;
  }
  if (typeof literal !== "string") throw invalidFilter(`'${op}' cannot compare with null.`);
  const text = value.caseExact ? literal : literal.toLowerCase();
  const containing = (like: Condition) => {
    value.onContains?.(text);
    return sql`(${kindIs("s")} and ${like})`;
  };
  switch (op) {
    case "eq":
      return sql`(${kindIs("s")} and ${value.text} = ${text})`;
    case "co":
      return containing(sql`${value.text} like ${`%${escapeLike(text)}%`} escape '\\'`);
    case "sw":
      return sql`(${kindIs("s")} and ${value.text} like ${`${escapeLike(text)}%`} escape '\\')`;
    case "ew":
      return containing(sql`${value.text} like ${`%${escapeLike(text)}`} escape '\\'`);
    default: {
      const operator = { gt: ">", ge: ">=", lt: "<", le: "<=" }[op];
      return sql`(${kindIs("s")} and ${value.text} ${sql.raw(operator)} ${text})`;
    }
  }
}

const any = () => sql`1=1`;

function present(target: FilterTarget, path: string[], scope: unknown): Condition {
  return target.present ? target.present(path, scope) : target.some(path, any, scope);
}

/**
 * Translates a parsed filter into one SQL condition over `target`. `not` binds tighter than `and`,
 * `and` than `or` (the parser's precedence); `ne` is "has no value equal to"; `eq null` is "not present".
 */
export function compileFilter(filter: Filter, target: FilterTarget, scope?: unknown): Condition {
  switch (filter.op) {
    case "and":
    case "or": {
      const parts = filter.filters.map((f) => compileFilter(f, target, scope));
      return sql`(${sql.join(parts, sql.raw(` ${filter.op} `))})`;
    }
    case "not":
      return sql`(not ${compileFilter(filter.filter, target, scope)})`;
    case "[]":
      return target.element(
        attributePath(filter.attrPath),
        (inner) => compileFilter(filter.valFilter, target, inner),
        scope,
      );
    case "pr":
      return present(target, attributePath(filter.attrPath), scope);
    default: {
      const path = attributePath(filter.attrPath);
      const literal = target.normalize ? target.normalize(path, filter.compValue) : filter.compValue;
      if (literal === null && (filter.op === "eq" || filter.op === "ne")) {
        const exists = present(target, path, scope);
        return filter.op === "eq" ? sql`(not ${exists})` : exists;
      }
      if (filter.op === "ne") return sql`(not ${target.some(path, (v) => compare("eq", v, literal), scope)})`;
      return target.some(path, (v) => compare(filter.op as Comparison, v, literal), scope);
    }
  }
}
