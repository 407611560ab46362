import { countsAsActiveAdmin, decide, type OperationId } from "../../contract/policy/index.js";
import { LIST_COUNT, SCHEMA_URN } from "../../contract/resources.js";
import type { Role } from "../../contract/route.js";
import { GROUPS_PATH } from "../../contract/scim-groups.js";
import { parseFilter } from "../filter/parse.js";
import { assertPreconditions, ChangedMeanwhile, etagOf, type Preconditions } from "../http/preconditions.js";
import { invalid, ProblemError } from "../problem-error.js";
import { isUniqueViolationOn } from "../store/errors.js";
import * as repo from "../store/groups-repo.js";
import type { GroupsTable } from "../store/schema.js";
import { type AuditEntry, actorOf, auditBy, refusalsRecorded } from "./audit.js";
import { assertGroupNamesFree, keepGroupWhenRetained } from "./deleted-groups.js";
import { type GroupChange, groupBody, patchChange } from "./group-changes.js";
import { keepingAnAdmin } from "./last-admin.js";
import type { PatchRequest } from "./resource-patch.js";
import { answer, groupRolesOfRow, listOf, type Projection, versioned } from "./scim-group-representation.js";
import type { Principal, ServiceContext } from "./service-context.js";

// /Groups (spec 1.9): groups of Users that grant roles. A change of a group's members or roles
// changes its members' effective roles at once (every credential reads them on each request),
// under the rules of section 1: least privilege and the last admin.

type Attributes = Record<string, unknown>;

const displayKeyOf = (name: string) => name.normalize("NFC").toLowerCase();

/** The columns of `groups` that say whether a group grants each role; a new role fails to compile here. */
const roleColumns = (roles: readonly Role[]): Pick<GroupsTable, `grants_${Role}`> => {
  const grants = (role: Role) => (roles.includes(role) ? 1 : 0);
  return { grants_admin: grants("admin"), grants_support: grants("support"), grants_member: grants("member") };
};

function assertMay(principal: Principal, operation: OperationId, roles: readonly Role[], name: string): void {
  const decision = decide(principal, operation, { roles }, { scopes: false, words: { about: `the group ${name}` } });
  if (!decision.allowed && decision.refusal) throw new ProblemError(decision.refusal.code, decision.refusal.message);
}

async function mustFind(ctx: ServiceContext, id: string): Promise<repo.GroupRow> {
  const row = await repo.findGroup(ctx.store.db, id);
  if (!row) throw new ProblemError("not_found", `No group with id ${id}.`);
  return row;
}

/** The one filter a group list takes: `displayName eq "..."` or `externalId eq "..."`. */
function listFilter(text: string | undefined): { displayKey?: string; externalId?: string } {
  if (text === undefined || text.trim() === "") return {};
  const refused = () =>
    invalid(
      `Groups are filtered by displayName eq "..." or externalId eq "..." only; '${text}' is neither.`,
      "/filter",
      "invalidFilter",
    );
  let filter: { op?: string; attrPath?: string; compValue?: unknown };
  try {
    filter = parseFilter(text) as typeof filter;
  } catch (error) {
    throw invalid(`The filter is not valid: ${(error as Error).message}`, "/filter", "invalidFilter");
  }
  const path = listOf(filter.attrPath)[0];
  if (filter.op !== "eq" || typeof filter.compValue !== "string") throw refused();
  if (path === "displayname") return { displayKey: displayKeyOf(filter.compValue) };
  if (path === "externalid") return { externalId: filter.compValue };
  throw refused();
}

export async function listGroups(
  ctx: ServiceContext,
  principal: Principal,
  query: Projection & { filter?: string; startindex?: number; count?: number },
) {
  assertMay(principal, "groups:read", [], "groups");
  const startIndex = Math.max(1, query.startindex ?? 1);
  const count = Math.min(Math.max(0, query.count ?? LIST_COUNT.default), LIST_COUNT.max);
  const { rows, total } = await repo.listGroups(ctx.store.db, {
    ...listFilter(query.filter),
    offset: startIndex - 1,
    limit: count,
  });
  return {
    schemas: [SCHEMA_URN.listResponse],
    totalResults: total,
    startIndex,
    itemsPerPage: rows.length,
    Resources: await answer(ctx, rows, query),
  };
}

export async function getGroup(ctx: ServiceContext, principal: Principal, id: string, projection: Projection = {}) {
  assertMay(principal, "groups:read", [], "groups");
  return versioned(ctx, await mustFind(ctx, id), projection);
}

/** 400 for a member that is not a User: a group holds Users only. */
async function assertUsers(ctx: ServiceContext, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const found = await repo.existingUsers(ctx.store.db, ids);
  const unknown = ids.find((id) => !found.has(id));
  if (unknown !== undefined) {
    throw invalid(`No User with id ${unknown}: a group's members are Users.`, "/members", "invalidValue");
  }
}

function conflict(error: unknown, change: Pick<GroupChange, "displayName" | "externalId">): never {
  if (isUniqueViolationOn(error, "display_key")) {
    throw new ProblemError("conflict", `A group named ${String(change.displayName)} already exists.`, {
      errors: [{ path: "/displayName", message: "is taken by another group (in any case)" }],
      scimType: "uniqueness",
    });
  }
  if (isUniqueViolationOn(error, "external_id")) {
    throw new ProblemError("conflict", `Another group has the externalId ${String(change.externalId)}.`, {
      errors: [{ path: "/externalId", message: "is taken by another group" }],
      scimType: "uniqueness",
    });
  }
  throw error;
}

const target = (row: Pick<repo.GroupRow, "display_name"> & { id?: string }) => ({
  type: "Group",
  ...(row.id !== undefined && { id: row.id }),
  name: row.display_name,
});

/** The problems a change of a group is refused with for who asks, not for what it asks. */
const REFUSALS: ReadonlySet<string> = new Set(["forbidden", "last_admin"]);

/**
 * Runs a change of a group, recording its refusal (not allowed, or the last admin's role) in the
 * audit trail on its own, as a refused change of a User is; `attempted` names the action at the
 * moment of the refusal.
 */
function refusalsOf<T>(
  ctx: ServiceContext,
  principal: Principal,
  on: ReturnType<typeof target>,
  attempted: () => AuditEntry["action"],
  change: () => Promise<T>,
): Promise<T> {
  return refusalsRecorded(
    ctx,
    (error) =>
      REFUSALS.has(error.code)
        ? { action: attempted(), target: on, actor: actorOf(principal), origin: principal.origin }
        : undefined,
    change,
  );
}

export async function createGroup(ctx: ServiceContext, principal: Principal, body: Attributes) {
  const change = groupBody(body);
  await refusalsOf(
    ctx,
    principal,
    target({ display_name: change.displayName }),
    () => "group.create",
    async () => {
      assertMay(principal, "groups:create", [], change.displayName);
      if (change.roles?.length) assertMay(principal, "groups:set-roles", change.roles, change.displayName);
    },
  );
  const members = change.replaceMembers ?? [];
  await assertUsers(ctx, members);
  await assertGroupNamesFree(ctx, {
    displayKey: displayKeyOf(change.displayName),
    externalId: change.externalId ?? null,
  });
  const now = ctx.clock().toISOString();
  const row: repo.GroupRow = {
    id: crypto.randomUUID(),
    display_name: change.displayName,
    display_key: displayKeyOf(change.displayName),
    external_id: change.externalId ?? null,
    ...roleColumns(change.roles ?? []),
    version: 1,
    created_at: now,
    updated_at: now,
  };
  try {
    await ctx.store.db.transaction().execute(async (trx) => {
      await repo.insertGroup(trx, row);
      await repo.addMembers(trx, row.id, members);
      await auditBy(ctx, trx, principal, {
        action: "group.create",
        target: target(row),
        details: { roles: change.roles ?? [], members: members.length },
      });
    });
  } catch (error) {
    conflict(error, change);
  }
  return { ...(await versioned(ctx, row, {})), location: `${GROUPS_PATH}/${row.id}` };
}

/**
 * Writes a change of a group: its row first (which orders concurrent changes of one group), then
 * its members one row each. A change that may take the last admin's role away runs under the
 * last-admin guard; If-Match is checked against the version the locked row had.
 */
async function applyChange(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  change: GroupChange,
  preconditions?: Preconditions,
) {
  const current = await mustFind(ctx, id);
  const roles = groupRolesOfRow(current);
  const renamed =
    (change.displayName !== undefined && change.displayName !== current.display_name) ||
    (change.externalId !== undefined && change.externalId !== current.external_id);
  const newRoles = change.roles;
  const rolesChanged = newRoles !== undefined && newRoles.join(",") !== roles.join(",");
  const membersChanged = change.replaceMembers !== undefined || change.add.size > 0 || change.remove.size > 0;
  let attempted: AuditEntry["action"] = "group.update";
  const may = (action: AuditEntry["action"], operation: OperationId, granted: readonly Role[]) => {
    attempted = action;
    assertMay(principal, operation, granted, current.display_name);
  };
  return refusalsOf(
    ctx,
    principal,
    target(current),
    () => attempted,
    async () => {
      if (renamed) may("group.update", "groups:update", roles);
      if (rolesChanged) may("group.roles", "groups:set-roles", newRoles);
      if (membersChanged) may("group.members", "groups:change-members", roles);
      await assertUsers(ctx, [...(change.replaceMembers ?? []), ...change.add]);
      if (renamed) await assertRenameFree(ctx, current, change);
      const losesAdmin =
        current.grants_admin === 1 &&
        ((newRoles !== undefined && !countsAsActiveAdmin(newRoles, true)) ||
          change.replaceMembers !== undefined ||
          change.remove.size > 0);
      if (losesAdmin) attempted = rolesChanged ? "group.roles" : "group.members";
      const nowIso = ctx.clock().toISOString();
      let written: repo.GroupRow | undefined;
      try {
        await ctx.store.db.transaction().execute(async (trx) => {
          const write = async () => {
            written = await repo.touchGroup(
              trx,
              id,
              {
                ...(change.displayName !== undefined && {
                  display_name: change.displayName,
                  display_key: displayKeyOf(change.displayName),
                }),
                ...(change.externalId !== undefined && { external_id: change.externalId }),
                ...(newRoles !== undefined && roleColumns(newRoles)),
              },
              nowIso,
            );
            if (!written) throw new ProblemError("not_found", `No group with id ${id}.`);
            assertPreconditions(preconditions, etagOf(written.version - 1));
            // the roles as the group's locked row has them: a concurrent change cannot slip support past them
            if (membersChanged && !rolesChanged)
              may("group.members", "groups:change-members", groupRolesOfRow(written));
            if (change.replaceMembers !== undefined) {
              await repo.removeAllMembers(trx, id);
              await repo.addMembers(trx, id, change.replaceMembers);
            }
            await repo.removeMembers(trx, id, [...change.remove]);
            await repo.addMembers(trx, id, [...change.add]);
          };
          await (losesAdmin ? keepingAnAdmin(ctx, trx, write) : write());
          const on = target(written ?? current);
          if (renamed) {
            await auditBy(ctx, trx, principal, {
              action: "group.update",
              target: on,
              details: { from: current.display_name, externalId: change.externalId ?? current.external_id },
            });
          }
          if (rolesChanged) {
            await auditBy(ctx, trx, principal, {
              action: "group.roles",
              target: on,
              details: { from: roles, to: newRoles },
            });
          }
          if (membersChanged) {
            await auditBy(ctx, trx, principal, {
              action: "group.members",
              target: on,
              details: {
                ...(change.replaceMembers !== undefined && { replacedWith: change.replaceMembers }),
                ...(change.add.size > 0 && { added: [...change.add] }),
                ...(change.remove.size > 0 && { removed: [...change.remove] }),
              },
            });
          }
        });
      } catch (error) {
        conflict(error, change);
      }
      return written as repo.GroupRow;
    },
  );
}

/** A group renamed to a name (or externalId) a deleted group holds is refused, as a create is. */
function assertRenameFree(ctx: ServiceContext, current: repo.GroupRow, change: GroupChange): Promise<void> {
  const displayKey = change.displayName === undefined ? null : displayKeyOf(change.displayName);
  const externalId = change.externalId ?? null;
  return assertGroupNamesFree(ctx, {
    displayKey: displayKey === current.display_key ? null : displayKey,
    externalId: externalId === current.external_id ? null : externalId,
  });
}

/** PUT: the whole group (Okta); the roles stay as they are unless the request names them. */
export async function replaceGroup(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  body: Attributes,
  preconditions?: Preconditions,
) {
  return versioned(ctx, await applyChange(ctx, principal, id, groupBody(body), preconditions), {});
}

/**
 * PATCH: no body (204) unless `attributes` asks for the group, or the caller answers with the
 * resource (/Resources); the ETag either way.
 */
export async function patchGroup(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  request: PatchRequest,
  projection: Projection = {},
  preconditions?: Preconditions,
  answersWhole = false,
): Promise<{ body: Attributes | undefined; etag: string }> {
  const row = await applyChange(ctx, principal, id, patchChange(request), preconditions);
  if (!answersWhole && (projection.attributes === undefined || projection.attributes.trim() === "")) {
    return { body: undefined, etag: etagOf(row.version) };
  }
  return versioned(ctx, row, projection);
}

export async function deleteGroup(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  preconditions?: Preconditions,
): Promise<void> {
  const current = await mustFind(ctx, id);
  await refusalsOf(
    ctx,
    principal,
    target(current),
    () => "group.delete",
    async () => {
      assertMay(principal, "groups:delete", groupRolesOfRow(current), current.display_name);
      await ctx.store.db.transaction().execute(async (trx) => {
        const remove = async () => {
          // kept for a restore first, when the server retains deletes; its roles end with its membership rows
          await keepGroupWhenRetained(ctx, trx, id);
          const gone = await repo.deleteGroup(
            trx,
            id,
            preconditions?.ifMatch === undefined ? undefined : current.version,
          );
          if (gone) return;
          if (await repo.findGroup(trx, id)) throw new ChangedMeanwhile("group", "deleted");
          throw new ProblemError("not_found", `No group with id ${id}.`);
        };
        assertPreconditions(preconditions, etagOf(current.version));
        await (current.grants_admin === 1 ? keepingAnAdmin(ctx, trx, remove) : remove());
        await auditBy(ctx, trx, principal, { action: "group.delete", target: target(current) });
      });
    },
  );
}
