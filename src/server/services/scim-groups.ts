import {
  countsAsActiveAdmin,
  decide,
  type OperationId,
  type RoleSource,
  roleSources,
} from "../../contract/policy/index.js";
import { LIST_COUNT, SCHEMA_URN } from "../../contract/resources.js";
import type { Role } from "../../contract/route.js";
import { SCIM_URN } from "../../contract/scim.js";
import { GROUPS_PATH } from "../../contract/scim-groups.js";
import { USERS_PATH } from "../../contract/scim-users.js";
import { parseFilter } from "../filter/parse.js";
import { invalid, ProblemError } from "../problem-error.js";
import { isUniqueViolationOn } from "../store/errors.js";
import * as repo from "../store/groups-repo.js";
import type { GroupsTable } from "../store/schema.js";
import { auditBy } from "./audit.js";
import { type GroupChange, groupBody, patchChange } from "./group-changes.js";
import { keepingAnAdmin } from "./last-admin.js";
import type { PatchRequest } from "./resource-patch.js";
import { project } from "./scim-projection.js";
import type { Principal, ServiceContext } from "./service-context.js";

// /Groups (spec 1.9): groups of Users that grant roles. A change of a group's members or roles
// changes its members' effective roles at once (every credential reads them on each request),
// under the rules of section 1: least privilege and the last admin.

type Attributes = Record<string, unknown>;

export interface Projection {
  attributes?: string;
  excludedattributes?: string;
}

const displayKeyOf = (name: string) => name.normalize("NFC").toLowerCase();

export const groupRolesOfRow = (row: repo.GroupRow): Role[] => [
  ...(row.grants_admin === 1 ? (["admin"] as const) : []),
  ...(row.grants_support === 1 ? (["support"] as const) : []),
  ...(row.grants_member === 1 ? (["member"] as const) : []),
];

/** The columns of `groups` that say whether a group grants each role; a new role fails to compile here. */
const roleColumns = (roles: readonly Role[]): Pick<GroupsTable, `grants_${Role}`> => {
  const grants = (role: Role) => (roles.includes(role) ? 1 : 0);
  return { grants_admin: grants("admin"), grants_support: grants("support"), grants_member: grants("member") };
};

const CORE_PREFIX = `${SCIM_URN.group}:`.toLowerCase();
const listOf = (text: string | undefined) =>
  (text ?? "")
    .split(",")
    .map((path) => path.trim().toLowerCase())
    .map((path) => (path.startsWith(CORE_PREFIX) ? path.slice(CORE_PREFIX.length) : path))
    .filter(Boolean);

/** Whether the answer holds the members: not when excluded, nor when `attributes` names others only. */
function wantsMembers(projection: Projection): boolean {
  const wanted = listOf(projection.attributes);
  if (wanted.length > 0) return wanted.some((path) => path === "members" || path.startsWith("members."));
  return !listOf(projection.excludedattributes).includes("members");
}

/** The core URN dropped from the projection's paths: scim-projection knows the User's only. */
const plain = (text: string | undefined) => (text === undefined ? undefined : listOf(text).join(","));

function representation(ctx: ServiceContext, row: repo.GroupRow, members?: repo.MemberRow[]): Attributes {
  const roles = groupRolesOfRow(row);
  const base = ctx.publicUrl ?? "";
  return {
    schemas: [SCIM_URN.group, SCIM_URN.groupRoles],
    id: row.id,
    displayName: row.display_name,
    ...(row.external_id !== null && { externalId: row.external_id }),
    ...(members && {
      members: members.map((member) => {
        const attributes = JSON.parse(member.attributes) as Attributes;
        const display = typeof attributes.displayName === "string" ? attributes.displayName : attributes.userName;
        return {
          value: member.user_id,
          ...(typeof display === "string" && { display }),
          $ref: `${base}${USERS_PATH}/${member.user_id}`,
          type: "User",
        };
      }),
    }),
    [SCIM_URN.groupRoles]: { roles },
    meta: {
      resourceType: "Group",
      created: row.created_at,
      lastModified: row.updated_at,
      version: `W/"${row.version}"`,
      location: `${base}${GROUPS_PATH}/${row.id}`,
    },
  };
}

/** The groups as the request asks for them, their members read only when asked for. */
async function answer(ctx: ServiceContext, rows: repo.GroupRow[], projection: Projection): Promise<Attributes[]> {
  const members = wantsMembers(projection)
    ? await repo.membersOf(
        ctx.store.db,
        rows.map((row) => row.id),
      )
    : undefined;
  return rows.map((row) =>
    project(
      representation(
        ctx,
        row,
        members?.filter((member) => member.group_id === row.id),
      ),
      plain(projection.attributes),
      plain(projection.excludedattributes),
    ),
  );
}

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
  const row = await mustFind(ctx, id);
  return (await answer(ctx, [row], projection))[0] as Attributes;
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

const target = (row: Pick<repo.GroupRow, "id" | "display_name">) => ({
  type: "Group",
  id: row.id,
  name: row.display_name,
});

export async function createGroup(ctx: ServiceContext, principal: Principal, body: Attributes) {
  const change = groupBody(body);
  assertMay(principal, "groups:create", [], change.displayName);
  if (change.roles?.length) assertMay(principal, "groups:set-roles", change.roles, change.displayName);
  const members = change.replaceMembers ?? [];
  await assertUsers(ctx, members);
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
  return { body: (await answer(ctx, [row], {}))[0] as Attributes, location: `${GROUPS_PATH}/${row.id}` };
}

/**
 * Writes a change of a group: its row first (which orders concurrent changes of one group), then
 * its members one row each. A change that may take the last admin's role away runs under the
 * last-admin guard.
 */
async function applyChange(ctx: ServiceContext, principal: Principal, id: string, change: GroupChange) {
  const current = await mustFind(ctx, id);
  const roles = groupRolesOfRow(current);
  const renamed =
    (change.displayName !== undefined && change.displayName !== current.display_name) ||
    (change.externalId !== undefined && change.externalId !== current.external_id);
  const newRoles = change.roles;
  const rolesChanged = newRoles !== undefined && newRoles.join(",") !== roles.join(",");
  const membersChanged = change.replaceMembers !== undefined || change.add.size > 0 || change.remove.size > 0;
  if (renamed) assertMay(principal, "groups:update", roles, current.display_name);
  if (rolesChanged) assertMay(principal, "groups:set-roles", newRoles, current.display_name);
  if (membersChanged) assertMay(principal, "groups:change-members", roles, current.display_name);
  await assertUsers(ctx, [...(change.replaceMembers ?? []), ...change.add]);
  const losesAdmin =
    current.grants_admin === 1 &&
    ((newRoles !== undefined && !countsAsActiveAdmin(newRoles, true)) ||
      change.replaceMembers !== undefined ||
      change.remove.size > 0);
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
        // the roles as the group's locked row has them: a concurrent change cannot slip support past them
        if (membersChanged && !rolesChanged) {
          assertMay(principal, "groups:change-members", groupRolesOfRow(written), current.display_name);
        }
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
}

/** PUT: the whole group (Okta); the roles stay as they are unless the request names them. */
export async function replaceGroup(ctx: ServiceContext, principal: Principal, id: string, body: Attributes) {
  const row = await applyChange(ctx, principal, id, groupBody(body));
  return (await answer(ctx, [row], {}))[0] as Attributes;
}

/** PATCH: undefined (204) unless `attributes` asks for the group. */
export async function patchGroup(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  request: PatchRequest,
  projection: Projection = {},
): Promise<Attributes | undefined> {
  const row = await applyChange(ctx, principal, id, patchChange(request));
  if (projection.attributes === undefined || projection.attributes.trim() === "") return undefined;
  return (await answer(ctx, [row], projection))[0];
}

export async function deleteGroup(ctx: ServiceContext, principal: Principal, id: string): Promise<void> {
  const current = await mustFind(ctx, id);
  assertMay(principal, "groups:delete", groupRolesOfRow(current), current.display_name);
  await ctx.store.db.transaction().execute(async (trx) => {
    const remove = async () => {
      if (!(await repo.deleteGroup(trx, id))) throw new ProblemError("not_found", `No group with id ${id}.`);
    };
    await (current.grants_admin === 1 ? keepingAnAdmin(ctx, trx, remove) : remove());
    await auditBy(ctx, trx, principal, { action: "group.delete", target: target(current) });
  });
}

/** Each effective role of the User with where it comes from: `direct`, or a group's name. */
export async function roleSourcesOf(
  ctx: ServiceContext,
  userId: string,
  direct: readonly string[],
): Promise<RoleSource[]> {
  const rows = await repo.groupsOfUsers(ctx.store.db, [userId]);
  return roleSources(
    direct,
    rows.map((row) => ({ displayName: row.display_name, roles: groupRolesOfRow(row) })),
  );
}

/** The `groups` of these Users (RFC 7643 section 4.1.2, readOnly): by user id. */
export async function groupsOfUsers(ctx: ServiceContext, userIds: readonly string[]) {
  const rows = await repo.groupsOfUsers(ctx.store.db, userIds);
  const base = ctx.publicUrl ?? "";
  const byUser = new Map<string, Attributes[]>();
  for (const row of rows) {
    const list = byUser.get(row.user_id) ?? [];
    list.push({ value: row.id, display: row.display_name, $ref: `${base}${GROUPS_PATH}/${row.id}`, type: "direct" });
    byUser.set(row.user_id, list);
  }
  return byUser;
}
