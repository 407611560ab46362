import type { Insertable, Kysely, RawBuilder, Selectable } from "kysely";
import { precompiledWrite } from "./precompiled.js";
import type { AuditLogTable, Schema } from "./schema.js";

export type AuditRow = Selectable<AuditLogTable>;
export type NewAuditRow = Insertable<AuditLogTable>;

const COLUMNS = [
  "id",
  "time",
  "actor_id",
  "actor_user_name",
  "actor_consumer_id",
  "actor_api_token_id",
  "actor_api_token_name",
  "action",
  "target_type",
  "target_id",
  "target_name",
  "outcome",
  "request_id",
  "client_ip",
  "user_agent",
  "details",
] as const satisfies readonly (keyof AuditLogTable)[];

/** Compiled once: a record rides along with many writes, and building the insert costs more than running it. */
const insertQuery = precompiledWrite(
  (db, ...markers: string[]) =>
    db.insertInto("audit_log").values(Object.fromEntries(COLUMNS.map((column, i) => [column, markers[i]])) as never),
  COLUMNS.length,
);

/** The only write of the trail besides retention: records are never updated. */
export async function insertAudit(db: Kysely<Schema>, row: NewAuditRow): Promise<void> {
  // a null takes a marker's slot like any value
  await insertQuery(db, ...(COLUMNS.map((column) => row[column] ?? null) as string[]));
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

/** Retention: records whose id sorts before `beforeId` (older, as ids sort in time order) go; the count that went. */
export async function pruneAudit(db: Kysely<Schema>, beforeId: string): Promise<number> {
  const result = await db.deleteFrom("audit_log").where("id", "<", beforeId).executeTakeFirst();
  return Number(result.numDeletedRows);
}
