import type { Kysely } from "kysely";
import { ProblemError } from "../problem-error.js";
import { rememberMember } from "../store/deleted-groups-repo.js";
import * as repo from "../store/deleted-users-repo.js";
import { insertResource } from "../store/resources-repo.js";
import type { Schema } from "../store/schema.js";
import { saveCredential } from "../store/users-repo.js";
import { auditBy } from "./audit.js";
import { uniqueness } from "./resource-columns.js";
import { heldByDeleted, retention } from "./retention.js";
import type { Principal, ServiceContext } from "./service-context.js";

// Deleted Users kept `--retain-deleted` days (spec 1.10): out of every read, their names still
// theirs, brought back or purged by an admin. The expired ones are purged lazily, before any read
// of the kept ones (a list, a restore, a purge, a create's check of its names), so that no timer
// is needed and one that ran out is gone for whoever asks.

const notFound = (id: string) => new ProblemError("not_found", `No deleted user with id ${id}.`);

async function current(ctx: ServiceContext): Promise<void> {
  await repo.purgeExpired(ctx.store.db, ctx.clock().toISOString());
}

/** Keeps the User `id`, about to be deleted in `trx`, when the server retains deletes. */
export async function keepWhenRetained(
  ctx: ServiceContext,
  trx: Kysely<Schema>,
  id: string,
  userName: string,
): Promise<void> {
  const times = retention(ctx);
  if (times) await repo.keepDeleted(trx, id, userName, times);
}

/** Refuses a User whose userName or externalId a deleted User holds: its restore would collide. */
export async function assertNamesFree(
  ctx: ServiceContext,
  keys: { userNameKey: string | null; externalId: string | null },
): Promise<void> {
  await current(ctx);
  const holder = await repo.holderOf(ctx.store.db, keys);
  if (!holder) return;
  const what = keys.userNameKey === holder.userName.toLowerCase() ? `userName ${holder.userName}` : "externalId";
  throw heldByDeleted("user", holder, what);
}

export async function listDeletedUsers(ctx: ServiceContext): Promise<{ Resources: repo.DeletedUser[] }> {
  await current(ctx);
  return { Resources: await repo.listDeleted(ctx.store.db) };
}

/** A group of a restored User that it is not back in: a deleted group (named while kept) or a purged one. */
export interface GroupNotRestored {
  id: string;
  displayName?: string;
}

/**
 * Puts the restored User `userId` back in those of its groups that exist, and answers the others:
 * a group deleted meanwhile and still kept counts it among its members, for the group's restore.
 */
async function restoreMemberships(
  trx: Kysely<Schema>,
  userId: string,
  groupIds: readonly string[],
): Promise<GroupNotRestored[]> {
  if (groupIds.length === 0) return [];
  const found = await trx.selectFrom("groups").select("id").where("id", "in", groupIds).execute();
  if (found.length > 0) {
    await trx
      .insertInto("group_members")
      .values(found.map((group) => ({ group_id: group.id, user_id: userId })))
      .execute();
  }
  const existing = new Set(found.map((group) => group.id));
  const missing = groupIds.filter((groupId) => !existing.has(groupId));
  const kept = new Map((await rememberMember(trx, missing, userId)).map((group) => [group.id, group.displayName]));
  return missing.map((groupId) => ({ id: groupId, ...(kept.has(groupId) && { displayName: kept.get(groupId) }) }));
}

/** Brings the deleted User `id` back: its attributes, roles and groups; no session, token or password. */
export async function restoreDeletedUser(ctx: ServiceContext, principal: Principal, id: string) {
  await current(ctx);
  const now = ctx.clock();
  let restored: repo.DeletedUser | undefined;
  let groupsNotRestored: GroupNotRestored[] = [];
  try {
    await ctx.store.db.transaction().execute(async (trx) => {
      const taken = await repo.takeDeleted(trx, id);
      if (!taken) throw notFound(id);
      restored = taken.user;
      await insertResource(trx, { ...taken.row, updated_at: now.toISOString(), version: taken.row.version + 1 });
      // its password ended with it: the restored user signs in after a reset or invitation link
      await saveCredential(trx, id, { passwordHash: null, firstLogin: true, created: true }, now);
      groupsNotRestored = await restoreMemberships(trx, id, taken.groupIds);
      await auditBy(ctx, trx, principal, {
        action: "user.restore",
        target: { type: "User", id, name: taken.user.userName },
      });
    });
  } catch (error) {
    if (error instanceof ProblemError) throw error;
    uniqueness(error, "User", { userName: restored?.userName, externalId: restored?.externalId });
  }
  return { id, userName: (restored as repo.DeletedUser).userName, groupsNotRestored };
}

/** Ends the wait of the deleted User `id`: it is gone for good, its names free. */
export async function purgeDeletedUser(ctx: ServiceContext, principal: Principal, id: string): Promise<void> {
  await current(ctx);
  await ctx.store.db.transaction().execute(async (trx) => {
    const taken = await repo.takeDeleted(trx, id);
    if (!taken) throw notFound(id);
    await auditBy(ctx, trx, principal, {
      action: "user.purge",
      target: { type: "User", id, name: taken.user.userName },
    });
  });
}
