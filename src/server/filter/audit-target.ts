import { type RawBuilder, sql } from "kysely";
import type { AuditLogTable } from "../store/schema.js";
import { type FilterTarget, invalidFilter, type Literal, type ValueColumns } from "./compile.js";

type Column = ValueColumns & { present: RawBuilder<unknown> };
const none = sql`null`;
const has = (column: keyof AuditLogTable) => sql`${sql.ref(`audit_log.${column}`)} is not null`;
/** names people type in any case: compared lower-cased */
const text = (column: keyof AuditLogTable): Column => ({
  kind: "s",
  text: sql`lower(${sql.ref(`audit_log.${column}`)})`,
  num: none,
  present: has(column),
});
/** ids, times and codes: compared as stored */
const exact = (column: keyof AuditLogTable): Column => ({
  kind: "s",
  text: sql.ref(`audit_log.${column}`),
  num: none,
  caseExact: true,
  present: has(column),
});

/**
 * The attributes of an audit record (as GET /audit shows them, lower-cased) and their columns. A
 * Map: an attribute of a filter is a plain name, `constructor` no more a column than `nosuch`.
 */
const COLUMNS = new Map<string, Column>(
  Object.entries({
    id: exact("id"),
    time: exact("time"),
    action: text("action"),
    outcome: text("outcome"),
    "actor.id": exact("actor_id"),
    "actor.username": text("actor_user_name"),
    "actor.consumerid": exact("actor_consumer_id"),
    "actor.apitokenid": exact("actor_api_token_id"),
    "actor.apitokenname": exact("actor_api_token_name"),
    "target.type": text("target_type"),
    "target.id": exact("target_id"),
    "target.name": text("target_name"),
    requestid: exact("request_id"),
    clientip: text("client_ip"),
    useragent: text("user_agent"),
  }),
);

/** The origin of a request, which a member sees on its own records only (see audit-list). */
const ORIGIN = new Set(["clientip", "useragent"]);

function columnOf(path: string[]): Column {
  const found = COLUMNS.get(path.join("."));
  if (!found) throw invalidFilter(`Audit records cannot be filtered by '${path.join(".")}'.`);
  return found;
}

/**
 * The filter target of GET /audit: every attribute is a column of audit_log. For a member
 * (`originsOf`: its id) the origin of a request is present on its own records only, so that a
 * filter cannot test the address or agent of whoever else acted on it, which it is not shown.
 */
export function auditTarget(originsOf?: string): FilterTarget {
  const column = (path: string[]): Column => {
    const found = columnOf(path);
    if (originsOf === undefined || !ORIGIN.has(path.join("."))) return found;
    return { ...found, present: sql`(${found.present} and audit_log.actor_id = ${originsOf})` };
  };
  return {
    normalize(path, literal): Literal {
      if (path.join(".") === "time" && typeof literal === "string") {
        const parsed = Date.parse(literal);
        if (Number.isNaN(parsed)) throw invalidFilter(`time needs an RFC 3339 date-time, not '${literal}'.`);
        return new Date(parsed).toISOString();
      }
      return literal;
    },
    some(path, predicate) {
      const found = column(path);
      return sql`(${found.present} and ${predicate(found)})`;
    },
    present(path) {
      return column(path).present;
    },
    element() {
      throw invalidFilter("Audit records have no multi-valued attributes.");
    },
  };
}
