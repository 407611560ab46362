import type { Insertable, Kysely, RawBuilder, Selectable } from "kysely";
import type { AuditLogTable, Schema } from "./schema.js";

export type AuditRow = Selectable<AuditLogTable>;

/** The only write of the trail besides retention: records are never updated. */
export async function insertAudit(db: Kysely<Schema>, row: Insertable<AuditLogTable>): Promise<void> {
  await db.insertInto("audit_log").values(row).execute();
}

export interface AuditListOptions {
  where: RawBuilder<unknown>[];
  /** newest first (the list) or oldest first (a tail) */
  newestFirst: boolean;
  limit: number;
}

/** One page, in id order (ids sort in time order). */
export async function listAudit(db: Kysely<Schema>, options: AuditListOptions): Promise<AuditRow[]> {
  let query = db.selectFrom("audit_log").selectAll();
  for (const condition of options.where) query = query.where(condition as RawBuilder<boolean>);
  return query
    .orderBy("id", options.newestFirst ? "desc" : "asc")
    .limit(options.limit)
    .execute();
}

/** Retention: records older than `beforeIso` go; the count of those that went. */
export async function pruneAudit(db: Kysely<Schema>, beforeIso: string): Promise<number> {
  const result = await db.deleteFrom("audit_log").where("time", "<", beforeIso).executeTakeFirst();
  return Number(result.numDeletedRows);
}
