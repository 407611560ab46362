import type { Kysely } from "kysely";
import type { GroupRow } from "./groups-repo.js";
import type { Schema } from "./schema.js";

/** A deleted Group as `groups deleted` lists it. */
export interface DeletedGroup {
  id: string;
  displayName: string;
  externalId: string | null;
  deletedAt: string;
  purgeAfter: string;
}

const COLUMNS = ["id", "display_name", "external_id", "deleted_at", "purge_after"] as const;

const listed = (row: {
  id: string;
  display_name: string;
  external_id: string | null;
  deleted_at: string;
  purge_after: string;
}): DeletedGroup => ({
  id: row.id,
  displayName: row.display_name,
  externalId: row.external_id,
  deletedAt: row.deleted_at,
  purgeAfter: row.purge_after,
});

/**
 * Keeps the group `id` in `deleted_groups` as this transaction reads it, with its members, before
 * its delete (whose cascade then ends its memberships, and so the roles it granted). A concurrent
 * delete of the same group that kept it first leaves this one nothing to keep: its own delete then
 * finds the group gone.
 */
export async function keepDeleted(
  db: Kysely<Schema>,
  id: string,
  times: { deletedAt: string; purgeAfter: string },
): Promise<void> {
  const row = await db.selectFrom("groups").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row) return;
  const members = await db.selectFrom("group_members").select("user_id").where("group_id", "=", id).execute();
  await db
    .insertInto("deleted_groups")
    .values({
      id,
      display_name: row.display_name,
      display_key: row.display_key,
      external_id: row.external_id,
      row: JSON.stringify(row),
      member_ids: JSON.stringify(members.map((m) => m.user_id)),
      deleted_at: times.deletedAt,
      purge_after: times.purgeAfter,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** Forgets the deleted Groups whose wait is over. */
export async function purgeExpired(db: Kysely<Schema>, nowIso: string): Promise<void> {
  await db.deleteFrom("deleted_groups").where("purge_after", "<=", nowIso).execute();
}

/** The kept deleted Groups, the oldest delete first, each with its row and how many members it had. */
export async function listDeleted(
  db: Kysely<Schema>,
): Promise<{ group: DeletedGroup; row: GroupRow; members: number }[]> {
  const rows = await db
    .selectFrom("deleted_groups")
    .select([...COLUMNS, "row", "member_ids"])
    .orderBy("deleted_at")
    .orderBy("id")
    .execute();
  return rows.map((row) => ({
    group: listed(row),
    row: JSON.parse(row.row) as GroupRow,
    members: (JSON.parse(row.member_ids) as string[]).length,
  }));
}

/** The deleted Group `id` as it is kept, without taking it; undefined if none. */
export async function findDeleted(db: Kysely<Schema>, id: string): Promise<GroupRow | undefined> {
  const found = await db.selectFrom("deleted_groups").select("row").where("id", "=", id).executeTakeFirst();
  return found && (JSON.parse(found.row) as GroupRow);
}

/** The deleted Group that holds this display name key or externalId, if one does. */
export async function holderOf(
  db: Kysely<Schema>,
  keys: { displayKey: string | null; externalId: string | null },
): Promise<DeletedGroup | undefined> {
  const { displayKey, externalId } = keys;
  if (displayKey === null && externalId === null) return undefined;
  const row = await db
    .selectFrom("deleted_groups")
    .select(COLUMNS)
    .where((eb) =>
      eb.or([
        ...(displayKey !== null ? [eb("display_key", "=", displayKey)] : []),
        ...(externalId !== null ? [eb("external_id", "=", externalId)] : []),
      ]),
    )
    .executeTakeFirst();
  return row && listed(row);
}

/** Removes the deleted Group `id` and answers what it kept: its row and its members; undefined if none. */
export async function takeDeleted(
  db: Kysely<Schema>,
  id: string,
): Promise<{ group: DeletedGroup; row: GroupRow; memberIds: string[] } | undefined> {
  const found = await db.selectFrom("deleted_groups").selectAll().where("id", "=", id).executeTakeFirst();
  if (!found) return undefined;
  const taken = await db.deleteFrom("deleted_groups").where("id", "=", id).executeTakeFirst();
  if (Number(taken.numDeletedRows) !== 1) return undefined;
  return {
    group: listed(found),
    row: JSON.parse(found.row) as GroupRow,
    memberIds: JSON.parse(found.member_ids) as string[],
  };
}

/**
 * The kept deleted Groups among `groupIds`, each now counting the User `userId` among its members:
 * the membership of a User restored before its group comes back with the group's restore.
 */
export async function rememberMember(
  db: Kysely<Schema>,
  groupIds: readonly string[],
  userId: string,
): Promise<DeletedGroup[]> {
  if (groupIds.length === 0) return [];
  const rows = await db
    .selectFrom("deleted_groups")
    .select([...COLUMNS, "member_ids"])
    .where("id", "in", groupIds)
    .execute();
  for (const row of rows) {
    const members = new Set(JSON.parse(row.member_ids) as string[]).add(userId);
    await db
      .updateTable("deleted_groups")
      .set({ member_ids: JSON.stringify([...members]) })
      .where("id", "=", row.id)
      .execute();
  }
  return rows.map(listed);
}
