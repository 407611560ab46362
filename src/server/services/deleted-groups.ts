import type { Kysely } from "kysely";
import { decide, type OperationId } from "../../contract/policy/index.js";
import type { Role } from "../../contract/route.js";
import { ProblemError } from "../problem-error.js";
import * as repo from "../store/deleted-groups-repo.js";
import { rememberGroup } from "../store/deleted-users-repo.js";
import { isUniqueViolationOn } from "../store/errors.js";
import { addMembers, existingUsers, insertGroup } from "../store/groups-repo.js";
import type { Schema } from "../store/schema.js";
import { auditBy } from "./audit.js";
import { heldByDeleted, retention } from "./retention.js";
import { groupRolesOfRow } from "./scim-group-representation.js";
import type { Principal, ServiceContext } from "./service-context.js";

// Deleted Groups kept `--retain-deleted` days (spec 1.10), as deleted Users are (deleted-users.ts):
// out of /Groups and /Resources, the roles they granted stopped with the delete, their names
// still theirs; brought back or purged by an admin. The expired ones are purged lazily, before any
// read of the kept ones (a list, a restore, a purge, a check of a group's names).

const notFound = (id: string) => new ProblemError("not_found", `No deleted group with id ${id}.`);

async function current(ctx: ServiceContext): Promise<void> {
  await repo.purgeExpired(ctx.store.db, ctx.clock().toISOString());
}

function assertMay(principal: Principal, operation: OperationId, roles: readonly Role[], name: string): void {
  const decision = decide(principal, operation, { roles }, { scopes: false, words: { about: `the group ${name}` } });
  if (!decision.allowed && decision.refusal) throw new ProblemError(decision.refusal.code, decision.refusal.message);
}

/** Keeps the group `id`, about to be deleted in `trx`, when the server retains deletes. */
export async function keepGroupWhenRetained(ctx: ServiceContext, trx: Kysely<Schema>, id: string): Promise<void> {
  const times = retention(ctx);
  if (times) await repo.keepDeleted(trx, id, times);
}

/** Refuses a group name or externalId that a deleted Group holds: its restore would collide. */
export async function assertGroupNamesFree(
  ctx: ServiceContext,
  keys: { displayKey: string | null; externalId: string | null },
): Promise<void> {
  if (keys.displayKey === null && keys.externalId === null) return;
  await current(ctx);
  const holder = await repo.holderOf(ctx.store.db, keys);
  if (!holder) return;
  const byName = holder.displayName.normalize("NFC").toLowerCase() === keys.displayKey;
  throw byName
    ? heldByDeleted("group", holder, `displayName ${holder.displayName}`, "/displayName")
    : heldByDeleted("group", holder, "externalId", "/externalId");
}

export async function listDeletedGroups(ctx: ServiceContext) {
  await current(ctx);
  const kept = await repo.listDeleted(ctx.store.db);
  return { Resources: kept.map(({ group, row, members }) => ({ ...group, roles: groupRolesOfRow(row), members })) };
}

/** A member of a restored group that is not back in it: a deleted User (named while kept) or a purged one. */
export interface MemberNotRestored {
  id: string;
  userName?: string;
}

/**
 * Brings the deleted Group `id` back: its name, externalId and roles, and its members that still
 * exist, who hold its roles again at once. A member deleted meanwhile and still kept counts the
 * group among its groups, for its own restore.
 */
export async function restoreDeletedGroup(ctx: ServiceContext, principal: Principal, id: string) {
  await current(ctx);
  const kept = await repo.findDeleted(ctx.store.db, id);
  if (!kept) throw notFound(id);
  const roles = groupRolesOfRow(kept);
  assertMay(principal, "groups:restore", roles, kept.display_name);
  const nowIso = ctx.clock().toISOString();
  let restored = 0;
  let membersNotRestored: MemberNotRestored[] = [];
  try {
    await ctx.store.db.transaction().execute(async (trx) => {
      const taken = await repo.takeDeleted(trx, id);
      if (!taken) throw notFound(id);
      await insertGroup(trx, { ...taken.row, updated_at: nowIso, version: taken.row.version + 1 });
      const existing = await existingUsers(trx, taken.memberIds);
      const back = taken.memberIds.filter((userId) => existing.has(userId));
      await addMembers(trx, id, back);
      restored = back.length;
      const gone = taken.memberIds.filter((userId) => !existing.has(userId));
      const waiting = new Map((await rememberGroup(trx, gone, id)).map((user) => [user.id, user.userName]));
      membersNotRestored = gone.map((userId) => ({
        id: userId,
        ...(waiting.has(userId) && { userName: waiting.get(userId) }),
      }));
      await auditBy(ctx, trx, principal, {
        action: "group.restore",
        target: { type: "Group", id, name: taken.row.display_name },
        details: { roles, members: restored, membersNotRestored: gone.length },
      });
    });
  } catch (error) {
    if (isUniqueViolationOn(error, "display_key") || isUniqueViolationOn(error, "external_id")) {
      throw new ProblemError("conflict", `Another group has the displayName or externalId of ${kept.display_name}.`, {
        scimType: "uniqueness",
      });
    }
    throw error;
  }
  return { id, displayName: kept.display_name, roles, members: restored, membersNotRestored };
}

/** Ends the wait of the deleted Group `id`: it is gone for good, its names free. */
export async function purgeDeletedGroup(ctx: ServiceContext, principal: Principal, id: string): Promise<void> {
  await current(ctx);
  await ctx.store.db.transaction().execute(async (trx) => {
    const taken = await repo.takeDeleted(trx, id);
    if (!taken) throw notFound(id);
    assertMay(principal, "groups:purge", groupRolesOfRow(taken.row), taken.row.display_name);
    await auditBy(ctx, trx, principal, {
      action: "group.purge",
      target: { type: "Group", id, name: taken.row.display_name },
    });
  });
}
