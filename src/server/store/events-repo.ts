import { type Kysely, type RawBuilder, type Selectable, sql } from "kysely";
import { precompiled } from "./precompiled.js";
import type { EventsTable, Schema } from "./schema.js";

export type EventRow = Selectable<EventsTable>;

export interface SortKey {
  column: keyof EventsTable;
  descending: boolean;
}

const eventQuery = precompiled((db, codeKey) => db.selectFrom("events").selectAll().where("code_key", "=", codeKey), 1);

export async function findEvent(db: Kysely<Schema>, code: string): Promise<EventRow | undefined> {
  return (await eventQuery(db, code.toLowerCase()))[0];
}

export async function insertEvent(db: Kysely<Schema>, row: EventRow): Promise<void> {
  await db.insertInto("events").values(row).execute();
}

/** Writes only when the stored version is still `expectedVersion`; false when it is not. */
export async function replaceEvent(db: Kysely<Schema>, row: EventRow, expectedVersion: number): Promise<boolean> {
  const { code_key, code, created_at, created_by, ...changes } = row;
  const result = await db
    .updateTable("events")
    .set(changes)
    .where("code_key", "=", code_key)
    .where("version", "=", expectedVersion)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteEvent(db: Kysely<Schema>, code: string, expectedVersion: number): Promise<boolean> {
  const result = await db
    .deleteFrom("events")
    .where("code_key", "=", code.toLowerCase())
    .where("version", "=", expectedVersion)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function listEvents(
  db: Kysely<Schema>,
  options: { where?: RawBuilder<unknown>; sort: SortKey[]; limit: number; offset: number },
): Promise<{ rows: EventRow[]; total: number }> {
  const where = (options.where ?? sql`1=1`) as RawBuilder<boolean>;
  let query = db.selectFrom("events").selectAll().where(where);
  // a missing value sorts last in ascending order (SCIM's rule, kept for every list)
  for (const key of options.sort) {
    query = query.orderBy(key.column, (ob) => (key.descending ? ob.desc().nullsFirst() : ob.asc().nullsLast()));
  }
  const rows = await query.limit(options.limit).offset(options.offset).execute();
  const count = await db
    .selectFrom("events")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where(where)
    .executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}
