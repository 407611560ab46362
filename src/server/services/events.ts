import type { Static } from "@sinclair/typebox";
import {
  CUSTOM_FIELDS_MAX_BYTES,
  EVENT_FIELDS,
  EVENT_PAGE_SIZE,
  EVENT_SORTABLE_FIELDS,
  type Event,
  type EventInput,
  type EventListQuery,
  type EventQuery,
} from "../../contract/events.js";
import { attributePath, compileFilter } from "../filter/compile.js";
import { eventsTarget } from "../filter/events-target.js";
import { type Filter, parseFilter } from "../filter/parse.js";
import {
  assertPreconditions,
  ChangedMeanwhile,
  etagOf,
  type Preconditions,
  retryWhenChanged,
} from "../http/preconditions.js";
import { formatTimestamp } from "../http/timestamps.js";
import { invalid, ProblemError } from "../problem-error.js";
import { isUniqueViolation } from "../store/errors.js";
import type { EventRow, SortKey } from "../store/events-repo.js";
import * as repo from "../store/events-repo.js";
import type { EventsTable } from "../store/schema.js";
import { actorOf, auditBy, auditRow } from "./audit.js";
import { type CursorQuery, decodeCursor, encodeCursor } from "./event-cursor.js";
import type { Principal, ServiceContext } from "./service-context.js";

type EventInputBody = Static<typeof EventInput>;
type ListQuery = Static<typeof EventListQuery>;
type SingleQuery = Static<typeof EventQuery>;
export type EventRepresentation = Static<typeof Event>;
type FieldName = (typeof EVENT_FIELDS)[number];

/** A Map: a sort key from the query is a plain name, `constructor` no more a column than `nosuch`. */
const COLUMN_OF = new Map<string, keyof EventsTable>(
  Object.entries({
    code: "code_key",
    name: "name",
    type: "type",
    startsAt: "starts_at",
    endsAt: "ends_at",
    allDay: "all_day",
    location: "location",
    organizer: "organizer",
    createdAt: "created_at",
    updatedAt: "updated_at",
    createdBy: "created_by",
  } satisfies Record<(typeof EVENT_SORTABLE_FIELDS)[number], keyof EventsTable>),
);

export function parseOrder(order: string | undefined): SortKey[] {
  const text = order?.trim() ? order : "startsAt,code";
  const seen = new Set<string>();
  const keys: SortKey[] = [];
  for (const raw of text.split(",")) {
    const item = raw.trim();
    const descending = item.startsWith("-");
    const field = descending ? item.slice(1) : item.replace(/^\+/, "");
    const column = COLUMN_OF.get(field);
    if (column === undefined) {
      throw invalid(
        `Cannot order by '${field}'; sortable fields: ${EVENT_SORTABLE_FIELDS.join(", ")}.`,
        "/query/order",
      );
    }
    if (seen.has(field)) throw invalid(`'${field}' appears twice in order.`, "/query/order");
    seen.add(field);
    keys.push({ column, descending });
  }
  // The unique code breaks ties so that pages never overlap or skip, in the direction of the
  // last key: `-createdAt` is then the `(created_at, code_key)` index read backwards. With the
  // code ascending under a descending key, the database sorted every tie, a whole million rows
  // where all share one creation time.
  if (!seen.has("code")) keys.push({ column: "code_key", descending: keys.at(-1)?.descending ?? false });
  return keys;
}

export function parseFields(fields: string | undefined): Set<FieldName> | undefined {
  if (fields === undefined || fields.trim() === "") return undefined;
  const chosen = new Set<FieldName>(["code"]);
  for (const raw of fields.split(",")) {
    const field = raw.trim();
    if (!(EVENT_FIELDS as readonly string[]).includes(field)) {
      throw invalid(`Unknown field '${field}'; fields: ${EVENT_FIELDS.join(", ")}.`, "/query/fields");
    }
    chosen.add(field as FieldName);
  }
  return chosen;
}

/**
 * The type, lower-cased as the compiled filter compares it, when the filter is `type eq "…"` and
 * nothing else: the total of such a page is kept by triggers.
 */
function typeOnly(filter: Filter): string | undefined {
  if (filter.op !== "eq" || typeof filter.compValue !== "string") return undefined;
  const path = attributePath(filter.attrPath);
  return path.length === 1 && path[0] === "type" ? filter.compValue.toLowerCase() : undefined;
}

/** What the list parameters mean; the contract checked their form and ranges. */
export function parseListQuery(query: ListQuery, dialect: "sqlite" | "postgres" = "sqlite") {
  const filter = query.filter !== undefined ? parseFilter(query.filter) : undefined;
  return {
    where: filter && compileFilter(filter, eventsTarget(dialect)),
    typeKey: filter && typeOnly(filter),
    sort: parseOrder(query.order),
    page: query.page ?? 1,
    pagesize: query.pagesize ?? EVENT_PAGE_SIZE.default,
    fields: parseFields(query.fields),
  };
}

/** The fields of a read, replace or delete; its `order` is checked as the list's is, and ignored. */
function singleEventFields(query: SingleQuery): Set<FieldName> | undefined {
  parseOrder(query.order);
  return parseFields(query.fields);
}

function toRepresentation(row: EventRow, fields?: Set<FieldName>): EventRepresentation {
  const full: Record<FieldName, unknown> = {
    code: row.code,
    name: row.name,
    description: row.description,
    type: row.type,
    startsAt: formatTimestamp(new Date(row.starts_at)),
    endsAt: row.ends_at && formatTimestamp(new Date(row.ends_at)),
    allDay: row.all_day === null ? null : row.all_day === 1,
    location: row.location,
    organizer: row.organizer,
    attendees: row.attendees && JSON.parse(row.attendees),
    tags: row.tags && JSON.parse(row.tags),
    customFields: row.custom_fields && JSON.parse(row.custom_fields),
    createdAt: formatTimestamp(new Date(row.created_at)),
    updatedAt: formatTimestamp(new Date(row.updated_at)),
    createdBy: row.created_by,
    version: row.version,
  };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(full)) {
    if (value !== null && value !== undefined && (!fields || fields.has(key as FieldName))) out[key] = value;
  }
  return out as EventRepresentation;
}

/** A code for an event created without one. */
export function newEventCode(): string {
  const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  return `EV-${Array.from(crypto.getRandomValues(new Uint8Array(10)), (b) => alphabet[b % 32]).join("")}`;
}

const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));

/** The stored row of a validated event; refuses what the schema cannot say (endsAt before startsAt). */
export function eventRow(
  code: string,
  body: EventInputBody,
  meta: { now: string; createdAt: string; createdBy: string | null; version: number },
): EventRow {
  // stored as toISOString() so that comparing text compares time, to the millisecond
  const startsAt = new Date(body.startsAt).toISOString();
  const endsAt = body.endsAt ? new Date(body.endsAt).toISOString() : null;
  if (endsAt && Date.parse(endsAt) < Date.parse(startsAt))
    throw invalid("endsAt must not be before startsAt.", "/endsAt");
  const customFields = json(body.customFields);
  if (customFields && Buffer.byteLength(customFields) > CUSTOM_FIELDS_MAX_BYTES) {
    throw invalid(`customFields must be at most ${CUSTOM_FIELDS_MAX_BYTES} bytes of JSON.`, "/customFields");
  }
  return {
    code_key: code.toLowerCase(),
    code,
    name: body.name,
    description: body.description ?? null,
    type: body.type ?? null,
    starts_at: startsAt,
    ends_at: endsAt,
    all_day: body.allDay === undefined || body.allDay === null ? null : body.allDay ? 1 : 0,
    location: body.location ?? null,
    organizer: body.organizer ?? null,
    attendees: json(body.attendees),
    tags: json(body.tags),
    custom_fields: customFields,
    created_at: meta.createdAt,
    updated_at: meta.now,
    created_by: meta.createdBy,
    version: meta.version,
    import_id: null,
  };
}

async function mustFind(ctx: ServiceContext, code: string): Promise<EventRow> {
  const row = await repo.findEvent(ctx.store.db, code);
  if (!row) throw new ProblemError("not_found", `No event with code ${code}.`);
  return row;
}

export interface Versioned<T> {
  body: T;
  etag: string;
}

/**
 * One page of the list. With `page` (or nothing) it is the page-th page by offset, with the exact
 * `total` and `totalPages`. With `cursor` (from the previous page's Link `next`) it continues
 * after the previous page's last row through the index, whatever the depth, and leaves out
 * `total` and `totalPages`: counting would cost the very scan the cursor avoids.
 * Either way `next` is the cursor of the following page, when there is one (for the Link header).
 */
export async function listEvents(ctx: ServiceContext, query: ListQuery) {
  const { sort, page: pageParam, pagesize, fields, where, typeKey } = parseListQuery(query, ctx.store.dialect);
  const db = ctx.store.db;
  const keyset: CursorQuery = { sort, filter: query.filter, pagesize, fits: repo.fitsColumn };
  const resumed = query.cursor === undefined ? undefined : decodeCursor(query.cursor, keyset);
  if (resumed && query.page !== undefined && pageParam !== resumed.page) {
    throw invalid(`page ${pageParam} does not match the cursor's page ${resumed.page}.`, "/query/page");
  }
  const page = resumed?.page ?? pageParam;
  // one row more than the page tells whether a next page exists
  const rows = await repo.listEvents(
    db,
    {
      where,
      sort,
      limit: pagesize + 1,
      ...(resumed ? { after: resumed.after } : { offset: (page - 1) * pagesize }),
    },
    ctx.store.dialect,
  );
  const more = rows.length > pagesize;
  if (more) rows.length = pagesize;
  const last = rows[rows.length - 1];
  const next = more && last ? encodeCursor(keyset, page + 1, last) : undefined;
  const data = rows.map((row) => toRepresentation(row, fields));
  if (resumed) return { body: { data, page, pagesize }, next };
  const total = await repo.countEvents(db, where, typeKey);
  return { body: { data, page, pagesize, total, totalPages: Math.ceil(total / pagesize) }, next };
}

export async function getEvent(
  ctx: ServiceContext,
  code: string,
  query: SingleQuery,
): Promise<Versioned<EventRepresentation>> {
  const fields = singleEventFields(query);
  const row = await mustFind(ctx, code);
  return { body: toRepresentation(row, fields), etag: etagOf(row.version) };
}

/** An event in the audit trail: its code and name; a change keeps which fields changed, not their values. */
const eventTarget = (row: EventRow) => ({ type: "Event", id: row.code, name: row.name });

const UNAUDITED_COLUMNS = new Set(["updated_at", "version"]);

function changedColumns(before: EventRow, after: EventRow): string[] {
  return (Object.keys(after) as (keyof EventRow)[])
    .filter((key) => !UNAUDITED_COLUMNS.has(key) && before[key] !== after[key])
    .sort();
}

export async function createEvent(
  ctx: ServiceContext,
  principal: Principal,
  body: EventInputBody,
  query: SingleQuery,
): Promise<Versioned<EventRepresentation>> {
  const fields = singleEventFields(query);
  const now = ctx.clock().toISOString();
  const row = eventRow(body.code ?? newEventCode(), body, {
    now,
    createdAt: now,
    createdBy: principal.userName,
    version: 1,
  });
  try {
    const record = auditRow(ctx, {
      action: "event.create",
      actor: actorOf(principal),
      origin: principal.origin,
      target: eventTarget(row),
    });
    await repo.insertAuditedEvent(ctx.store.db, { row, record });
  } catch (error) {
    if (isUniqueViolation(error)) throw new ProblemError("conflict", `An event with code ${row.code} already exists.`);
    throw error;
  }
  return { body: toRepresentation(row, fields), etag: etagOf(row.version) };
}

export async function replaceEvent(
  ctx: ServiceContext,
  principal: Principal,
  code: string,
  body: EventInputBody,
  preconditions: Preconditions | undefined,
  query: SingleQuery,
): Promise<Versioned<EventRepresentation>> {
  const fields = singleEventFields(query);
  if (body.code !== undefined && body.code.toLowerCase() !== code.toLowerCase()) {
    throw invalid(`The code in the body (${body.code}) differs from the one in the path (${code}).`, "/code");
  }
  return retryWhenChanged(async () => {
    const current = await mustFind(ctx, code);
    assertPreconditions(preconditions, etagOf(current.version));
    const row = eventRow(current.code, body, {
      now: ctx.clock().toISOString(),
      createdAt: current.created_at,
      createdBy: current.created_by,
      version: current.version + 1,
    });
    await ctx.store.db.transaction().execute(async (trx) => {
      if (!(await repo.replaceEvent(trx, row, current.version))) throw new ChangedMeanwhile("event", "updated");
      await auditBy(ctx, trx, principal, {
        action: "event.update",
        target: eventTarget(row),
        details: { changed: changedColumns(current, row) },
      });
    });
    return { body: toRepresentation(row, fields), etag: etagOf(row.version) };
  });
}

export async function deleteEvent(
  ctx: ServiceContext,
  principal: Principal,
  code: string,
  preconditions: Preconditions | undefined,
  query: SingleQuery,
): Promise<void> {
  singleEventFields(query);
  await retryWhenChanged(async () => {
    const current = await mustFind(ctx, code);
    assertPreconditions(preconditions, etagOf(current.version));
    await ctx.store.db.transaction().execute(async (trx) => {
      if (!(await repo.deleteEvent(trx, code, current.version))) throw new ChangedMeanwhile("event", "deleted");
      await auditBy(ctx, trx, principal, { action: "event.delete", target: eventTarget(current) });
    });
  });
}

/**
 * Deletes the events of these codes (`events delete --filter`) in one transaction, each audited
 * as its single delete would be; a code that names no event (gone meanwhile) is told, not a
 * failure, so that a clean-up run twice passes.
 */
export async function deleteEventsByCode(ctx: ServiceContext, principal: Principal, codes: string[]) {
  const keys = [...new Set(codes.map((code) => code.toLowerCase()))];
  return retryWhenChanged(async () => {
    const found = await repo.findEvents(ctx.store.db, keys);
    const results: { code: string; status: "deleted" | "not_found" }[] = [];
    await ctx.store.db.transaction().execute(async (trx) => {
      for (const key of keys) {
        const current = found.get(key);
        if (!current) {
          results.push({ code: codes.find((code) => code.toLowerCase() === key) ?? key, status: "not_found" });
          continue;
        }
        if (!(await repo.deleteEvent(trx, current.code, current.version)))
          throw new ChangedMeanwhile("event", "deleted");
        await auditBy(ctx, trx, principal, { action: "event.delete", target: eventTarget(current) });
        results.push({ code: current.code, status: "deleted" });
      }
    });
    const deleted = results.filter((result) => result.status === "deleted").length;
    return { deleted, notFound: results.length - deleted, results };
  });
}
