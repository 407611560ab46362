import type { Kysely, Selectable } from "kysely";
import type { EventImportItemsTable, EventImportsTable, Schema } from "./schema.js";

export async function createImport(db: Kysely<Schema>, row: EventImportsTable): Promise<void> {
  await db.insertInto("event_imports").values(row).execute();
}

export async function findImport(db: Kysely<Schema>, id: string): Promise<Selectable<EventImportsTable> | undefined> {
  return db.selectFrom("event_imports").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Reserves `count` positions in the import's order; returns the first. */
export async function reserveSeq(db: Kysely<Schema>, id: string, count: number): Promise<number> {
  const row = await db
    .updateTable("event_imports")
    .set((eb) => ({ next_seq: eb("next_seq", "+", count) }))
    .where("id", "=", id)
    .returning("next_seq")
    .executeTakeFirstOrThrow();
  return Number(row.next_seq) - count;
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

export async function dropImport(db: Kysely<Schema>, id: string): Promise<void> {
  // explicit rather than by cascade: SQLite applies ON DELETE only with foreign_keys on
  await db.deleteFrom("event_import_items").where("import_id", "=", id).execute();
  await db.deleteFrom("event_imports").where("id", "=", id).execute();
}

export async function dropImportsBefore(db: Kysely<Schema>, createdBefore: string): Promise<void> {
  const old = db.selectFrom("event_imports").select("id").where("created_at", "<", createdBefore);
  await db.deleteFrom("event_import_items").where("import_id", "in", old).execute();
  await db.deleteFrom("event_imports").where("created_at", "<", createdBefore).execute();
}
