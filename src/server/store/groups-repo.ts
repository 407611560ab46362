import type { Kysely } from "kysely";
import type { GroupsTable, Schema } from "./schema.js";

// SCIM Groups and their members (spec 1.9): one row a group, one row a membership. Membership
// writes touch only the rows they name, so that their cost does not grow with the group.

export type GroupRow = GroupsTable;

/** How many rows one statement writes or names at most (well within either store's parameter limit). */
const CHUNK = 500;

export const chunks = <T>(items: readonly T[]): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
};

export async function insertGroup(db: Kysely<Schema>, row: GroupRow): Promise<void> {
  await db.insertInto("groups").values(row).execute();
}

export function findGroup(db: Kysely<Schema>, id: string): Promise<GroupRow | undefined> {
  return db.selectFrom("groups").selectAll().where("id", "=", id).executeTakeFirst();
}

export interface GroupQuery {
  displayKey?: string;
  externalId?: string;
  offset: number;
  limit: number;
}

/** A page of groups in the order of their display names, and how many match. */
export async function listGroups(db: Kysely<Schema>, query: GroupQuery): Promise<{ rows: GroupRow[]; total: number }> {
  let base = db.selectFrom("groups");
  if (query.displayKey !== undefined) base = base.where("display_key", "=", query.displayKey);
  if (query.externalId !== undefined) base = base.where("external_id", "=", query.externalId);
  const counted = await base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  const total = Number(counted.n);
  if (query.limit === 0) return { rows: [], total };
  const rows = await base.selectAll().orderBy("display_key").offset(query.offset).limit(query.limit).execute();
  return { rows, total };
}

/**
 * Takes the group's row for this transaction (a new version, the time of the change): concurrent
 * changes of one group's members wait on it in turn on PostgreSQL, as SQLite's one writer does.
 * Undefined when the group is gone.
 */
export async function touchGroup(
  db: Kysely<Schema>,
  id: string,
  change: Partial<
    Pick<GroupRow, "display_name" | "display_key" | "external_id" | "grants_admin" | "grants_support" | "grants_member">
  >,
  nowIso: string,
): Promise<GroupRow | undefined> {
  return db
    .updateTable("groups")
    .set((eb) => ({ ...change, updated_at: nowIso, version: eb("version", "+", 1) }))
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the group, only at that version when one is given (a conditional delete). */
export async function deleteGroup(db: Kysely<Schema>, id: string, version?: number): Promise<boolean> {
  const result = await db
    .deleteFrom("groups")
    .where("id", "=", id)
    .$if(version !== undefined, (query) => query.where("version", "=", version as number))
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Adds these Users to the group; those already in it stay as they are. */
export async function addMembers(db: Kysely<Schema>, groupId: string, userIds: readonly string[]): Promise<void> {
  for (const part of chunks(userIds)) {
    await db
      .insertInto("group_members")
      .values(part.map((user_id) => ({ group_id: groupId, user_id })))
      .onConflict((oc) => oc.columns(["group_id", "user_id"]).doNothing())
      .execute();
  }
}

/** Removes these Users from the group; those not in it are no matter. */
export async function removeMembers(db: Kysely<Schema>, groupId: string, userIds: readonly string[]): Promise<void> {
  for (const part of chunks(userIds)) {
    await db.deleteFrom("group_members").where("group_id", "=", groupId).where("user_id", "in", part).execute();
  }
}

export async function removeAllMembers(db: Kysely<Schema>, groupId: string): Promise<void> {
  await db.deleteFrom("group_members").where("group_id", "=", groupId).execute();
}

/** Which of these ids are Users. */
export async function existingUsers(db: Kysely<Schema>, ids: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const part of chunks([...new Set(ids)])) {
    const rows = await db
      .selectFrom("resources")
      .select("id")
      .where("resource_type", "=", "User")
      .where("id", "in", part)
      .execute();
    for (const row of rows) found.add(row.id);
  }
  return found;
}

export interface MemberRow {
  group_id: string;
  user_id: string;
  attributes: string;
}

/** The members of these groups, with their Users' attributes (for `display`), by user id. */
export async function membersOf(db: Kysely<Schema>, groupIds: readonly string[]): Promise<MemberRow[]> {
  if (groupIds.length === 0) return [];
  return db
    .selectFrom("group_members as gm")
    .innerJoin("resources as r", "r.id", "gm.user_id")
    .select(["gm.group_id", "gm.user_id", "r.attributes"])
    .where("gm.group_id", "in", groupIds)
    .orderBy("gm.group_id")
    .orderBy("gm.user_id")
    .execute();
}

/** The groups of these Users, by name. */
export async function groupsOfUsers(
  db: Kysely<Schema>,
  userIds: readonly string[],
): Promise<(GroupRow & { user_id: string })[]> {
  if (userIds.length === 0) return [];
  return db
    .selectFrom("group_members as gm")
    .innerJoin("groups as g", "g.id", "gm.group_id")
    .selectAll("g")
    .select("gm.user_id")
    .where("gm.user_id", "in", userIds)
    .orderBy("g.display_key")
    .execute();
}
