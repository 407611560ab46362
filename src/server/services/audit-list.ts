import type { Static } from "@sinclair/typebox";
import { type RawBuilder, sql } from "kysely";
import { AUDIT_PAGE_SIZE, type AuditRecord, type listAudit as listAuditRoute } from "../../contract/audit.js";
import { allows } from "../../contract/policy/index.js";
import type { QueryOf } from "../../contract/route.js";
import { auditTarget } from "../filter/audit-target.js";
import { compileFilter } from "../filter/compile.js";
import { parseFilter } from "../filter/parse.js";
import { invalid } from "../problem-error.js";
import { type AuditRow, listAudit as listRows, pruneAudit } from "../store/audit-repo.js";
import { AUDIT_ID_PATTERN, auditIdFloor } from "./audit.js";
import { type CursorQuery, decodeCursor, encodeCursor } from "./event-cursor.js";
import type { Principal, ServiceContext } from "./service-context.js";

export type AuditQuery = QueryOf<typeof listAuditRoute>;
type Record = Static<typeof AuditRecord>;

/**
 * Who reads what: admins every record, support every record but key operations (which concern the
 * deployment, not the people support helps), members the records where they are actor or target.
 */
function visibleTo(principal: Principal): RawBuilder<unknown> | undefined {
  if (allows(principal, "audit:read-others")) {
    return allows(principal, "audit:read-keys") ? undefined : sql`audit_log.action not like 'key.%'`;
  }
  return sql`(audit_log.actor_id = ${principal.userId} or audit_log.target_id = ${principal.userId})`;
}

/**
 * Whose request origins (client address, user agent) the principal reads: a member its own only,
 * not those of the admin or support person who acted on it, nor of an anonymous caller (a wrong
 * password typed for its name); undefined for admins and support, who read every one.
 */
function ownOriginsOnly(principal: Principal): string | undefined {
  return allows(principal, "audit:read-others") ? undefined : principal.userId;
}

function time(value: string, name: "since" | "until"): string {
  const parsed = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(parsed)) {
    throw invalid(
      `${name} must be an RFC 3339 time${name === "since" ? " or a record id" : ""}, not '${value}'.`,
      `/query/${name}`,
    );
  }
  return new Date(parsed).toISOString();
}

function toRecord(row: AuditRow, ownOrigins: string | undefined): Record {
  const origin = ownOrigins === undefined || row.actor_id === ownOrigins;
  const actor = {
    ...(row.actor_id && { id: row.actor_id }),
    ...(row.actor_user_name && { userName: row.actor_user_name }),
    ...(row.actor_consumer_id && { consumerId: row.actor_consumer_id }),
    ...(row.actor_api_token_id && { apiTokenId: row.actor_api_token_id }),
    ...(row.actor_api_token_name && { apiTokenName: row.actor_api_token_name }),
  };
  return {
    id: row.id,
    time: row.time,
    ...(Object.keys(actor).length > 0 && { actor }),
    action: row.action,
    ...(row.target_type && {
      target: {
        type: row.target_type,
        ...(row.target_id && { id: row.target_id }),
        ...(row.target_name && { name: row.target_name }),
      },
    }),
    outcome: row.outcome,
    ...(row.request_id && { requestId: row.request_id }),
    ...(origin && row.client_ip && { clientIp: row.client_ip }),
    ...(origin && row.user_agent && { userAgent: row.user_agent }),
    ...(row.details && { details: JSON.parse(row.details) as { [key: string]: unknown } }),
  };
}

/**
 * GET /audit: one page in id order (time order), newest first unless `order=oldest`. `next` is
 * the keyset cursor of the following page (the events list's cursor, bound to this query).
 */
export async function listAudit(ctx: ServiceContext, principal: Principal, query: AuditQuery) {
  const pagesize = query.pagesize ?? AUDIT_PAGE_SIZE.default;
  const newestFirst = query.order !== "oldest";
  const where: RawBuilder<unknown>[] = [];
  const visible = visibleTo(principal);
  const ownOrigins = ownOriginsOnly(principal);
  if (visible) where.push(visible);
  if (query.filter !== undefined) where.push(compileFilter(parseFilter(query.filter), auditTarget(ownOrigins)));
  if (query.since !== undefined) {
    where.push(
      AUDIT_ID_PATTERN.test(query.since)
        ? sql`audit_log.id > ${query.since}`
        : sql`audit_log.time >= ${time(query.since, "since")}`,
    );
  }
  if (query.until !== undefined) where.push(sql`audit_log.time < ${time(query.until, "until")}`);
  const keyset: CursorQuery = {
    sort: [{ column: "id", descending: newestFirst }],
    fits: (_column, value) => typeof value === "string",
    filter: JSON.stringify([query.filter ?? null, query.since ?? null, query.until ?? null]),
    pagesize,
  };
  const resumed = query.cursor === undefined ? undefined : decodeCursor(query.cursor, keyset);
  const after = resumed?.after[0];
  if (typeof after === "string") where.push(newestFirst ? sql`audit_log.id < ${after}` : sql`audit_log.id > ${after}`);
  const rows = await listRows(ctx.store.db, { where, newestFirst, limit: pagesize + 1 });
  const more = rows.length > pagesize;
  if (more) rows.length = pagesize;
  const last = rows[rows.length - 1];
  const next = more && last ? encodeCursor(keyset, (resumed?.page ?? 1) + 1, last) : undefined;
  return {
    body: { data: rows.map((row) => toRecord(row, ownOrigins)), pagesize, ...(last && { last: last.id }) },
    next,
  };
}

/** Retention: removes the records older than `days`; the count removed. */
export async function pruneAuditTrail(ctx: ServiceContext, days: number): Promise<number> {
  return pruneAudit(ctx.store.db, auditIdFloor(ctx.clock().getTime() - days * 24 * 3600 * 1000));
}
