import type { Kysely } from "kysely";
import { chunks } from "./groups-repo.js";
import type { ResourceRow } from "./resources-repo.js";
import type { Schema } from "./schema.js";

/** A deleted User as `users deleted` lists it. */
export interface DeletedUser {
  id: string;
  userName: string;
  externalId: string | null;
  deletedAt: string;
  purgeAfter: string;
}

const listed = (row: {
  id: string;
  user_name: string;
  external_id: string | null;
  deleted_at: string;
  purge_after: string;
}): DeletedUser => ({
  id: row.id,
  userName: row.user_name,
  externalId: row.external_id,
  deletedAt: row.deleted_at,
  purgeAfter: row.purge_after,
});

/**
 * Moves the User `id` out of `resources` into `deleted_users`, with the groups it is in, before
 * its delete (whose cascades then end its sessions, tokens, credential and memberships).
 */
export async function keepDeleted(
  db: Kysely<Schema>,
  id: string,
  userName: string,
  times: { deletedAt: string; purgeAfter: string },
): Promise<void> {
  const row = await db
    .selectFrom("resources")
    .select([
      "id",
      "resource_type",
      "external_id",
      "display_name",
      "user_name_key",
      "attributes",
      "created_at",
      "updated_at",
      "version",
      "service_account",
    ])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  const groups = await db.selectFrom("group_members").select("group_id").where("user_id", "=", id).execute();
  await db
    .insertInto("deleted_users")
    .values({
      id,
      user_name: userName,
      user_name_key: row.user_name_key ?? userName.toLowerCase(),
      external_id: row.external_id,
      row: JSON.stringify(row),
      group_ids: JSON.stringify(groups.map((g) => g.group_id)),
      deleted_at: times.deletedAt,
      purge_after: times.purgeAfter,
    })
    .execute();
}

/** Forgets the deleted Users whose wait is over. */
export async function purgeExpired(db: Kysely<Schema>, nowIso: string): Promise<void> {
  await db.deleteFrom("deleted_users").where("purge_after", "<=", nowIso).execute();
}

export async function listDeleted(db: Kysely<Schema>): Promise<DeletedUser[]> {
  const rows = await db
    .selectFrom("deleted_users")
    .select(["id", "user_name", "external_id", "deleted_at", "purge_after"])
    .orderBy("deleted_at")
    .orderBy("id")
    .execute();
  return rows.map(listed);
}

/** The deleted User that holds this userName key or externalId, if one does. */
export async function holderOf(
  db: Kysely<Schema>,
  keys: { userNameKey: string | null; externalId: string | null },
): Promise<DeletedUser | undefined> {
  const { userNameKey, externalId } = keys;
  if (userNameKey === null && externalId === null) return undefined;
  const row = await db
    .selectFrom("deleted_users")
    .select(["id", "user_name", "external_id", "deleted_at", "purge_after"])
    .where((eb) =>
      eb.or([
        ...(userNameKey !== null ? [eb("user_name_key", "=", userNameKey)] : []),
        ...(externalId !== null ? [eb("external_id", "=", externalId)] : []),
      ]),
    )
    .executeTakeFirst();
  return row && listed(row);
}

/** Removes the deleted User `id` and answers what it kept: its row and its groups; undefined if none. */
export async function takeDeleted(
  db: Kysely<Schema>,
  id: string,
): Promise<{ user: DeletedUser; row: ResourceRow; groupIds: string[] } | undefined> {
  const found = await db.selectFrom("deleted_users").selectAll().where("id", "=", id).executeTakeFirst();
  if (!found) return undefined;
  const taken = await db.deleteFrom("deleted_users").where("id", "=", id).executeTakeFirst();
  if (Number(taken.numDeletedRows) !== 1) return undefined;
  return {
    user: listed(found),
    row: JSON.parse(found.row) as ResourceRow,
    groupIds: JSON.parse(found.group_ids) as string[],
  };
}

/**
 * The kept deleted Users among `userIds`, each now counting the group `groupId` among its groups:
 * the membership of a group restored before its member comes back with the member's restore.
 */
export async function rememberGroup(
  db: Kysely<Schema>,
  userIds: readonly string[],
  groupId: string,
): Promise<DeletedUser[]> {
  const kept: DeletedUser[] = [];
  for (const part of chunks(userIds)) {
    const rows = await db
      .selectFrom("deleted_users")
      .select(["id", "user_name", "external_id", "deleted_at", "purge_after", "group_ids"])
      .where("id", "in", part)
      .execute();
    for (const row of rows) {
      const groups = new Set(JSON.parse(row.group_ids) as string[]).add(groupId);
      await db
        .updateTable("deleted_users")
        .set({ group_ids: JSON.stringify([...groups]) })
        .where("id", "=", row.id)
        .execute();
      kept.push(listed(row));
    }
  }
  return kept;
}
