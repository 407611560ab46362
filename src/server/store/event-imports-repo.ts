import { type Insertable, type Kysely, type Selectable, sql } from "kysely";
import type { EventImportItemsTable, EventImportsTable, Schema } from "./schema.js";

export type EventImport = Selectable<EventImportsTable>;

export async function createImport(db: Kysely<Schema>, row: Insertable<EventImportsTable>): Promise<void> {
  await db.insertInto("event_imports").values(row).execute();
}

export async function findImport(db: Kysely<Schema>, id: string): Promise<EventImport | undefined> {
  return db.selectFrom("event_imports").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The imports a user has open (staging or committing), created at or after `since`. */
export async function countOpenImports(db: Kysely<Schema>, userId: string, since: string): Promise<number> {
  const row = await db
    .selectFrom("event_imports")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("created_by", "=", userId)
    .where("created_at", ">=", since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Reserves `count` positions in the import's order and counts `bytes` more staged; returns the
 * first position and the import's totals after the reservation.
 */
export async function reserveSeq(db: Kysely<Schema>, id: string, count: number, bytes: number) {
  const row = await db
    .updateTable("event_imports")
    .set((eb) => ({ next_seq: eb("next_seq", "+", count), staged_bytes: sql<number>`staged_bytes + ${bytes}` }))
    .where("id", "=", id)
    .where("state", "=", "open")
    .returning(["next_seq", "staged_bytes"])
    .executeTakeFirst();
  if (!row) return undefined;
  const items = Number(row.next_seq);
  return { first: items - count, items, bytes: Number(row.staged_bytes) };
}

/** Marks an open import as committing; false when it is not open (a commit is under way). */
export async function claimForCommit(db: Kysely<Schema>, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable("event_imports")
    .set({ state: "committing", commit_started_at: now })
    .where("id", "=", id)
    .where("state", "=", "open")
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function stageItems(db: Kysely<Schema>, id: string, items: Omit<EventImportItemsTable, "import_id">[]) {
  for (let i = 0; i < items.length; i += 200) {
    const chunk = items.slice(i, i + 200).map((item) => ({ import_id: id, ...item }));
    if (chunk.length > 0) await db.insertInto("event_import_items").values(chunk).execute();
  }
}

export async function stagedItems(db: Kysely<Schema>, id: string, afterSeq: number, limit: number) {
  return db
    .selectFrom("event_import_items")
    .select(["seq", "ref", "body"])
    .where("import_id", "=", id)
    .where("seq", ">", afterSeq)
    .orderBy("seq")
    .limit(limit)
    .execute();
}

/** Deletes up to `limit` of an import's staged items; how many went. */
export async function deleteStagedItems(db: Kysely<Schema>, id: string, limit: number): Promise<number> {
  const result = await db
    .deleteFrom("event_import_items")
    .where("import_id", "=", id)
    .where("seq", "in", (eb) =>
      eb.selectFrom("event_import_items").select("seq").where("import_id", "=", id).orderBy("seq").limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteImport(db: Kysely<Schema>, id: string): Promise<void> {
  await db.deleteFrom("event_imports").where("id", "=", id).execute();
}

/**
 * The imports to give up: left open past their expiry (a killed client), or committing since
 * before `committingBefore` (a process that died in its commit).
 */
export async function abandonedImports(db: Kysely<Schema>, createdBefore: string, committingBefore: string) {
  const rows = await db
    .selectFrom("event_imports")
    .select("id")
    .where((eb) =>
      eb.or([
        eb("created_at", "<", createdBefore),
        eb.and([eb("state", "=", "committing"), eb("commit_started_at", "<", committingBefore)]),
      ]),
    )
    .execute();
  return rows.map((row) => row.id);
}
