import { type RoleSource, roleSources } from "../../contract/policy/index.js";
import type { Role } from "../../contract/route.js";
import { SCIM_URN } from "../../contract/scim.js";
import { GROUPS_PATH } from "../../contract/scim-groups.js";
import { USERS_PATH } from "../../contract/scim-users.js";
import { etagOf } from "../http/preconditions.js";
import * as repo from "../store/groups-repo.js";
import { project } from "./scim-projection.js";
import type { ServiceContext } from "./service-context.js";

// A Group as SCIM answers it (RFC 7643 section 4.2), projected as the request asks, its members
// read only when asked for; and the groups of a User, as /Users shows them and its roles' sources.

type Attributes = Record<string, unknown>;

export interface Projection {
  attributes?: string;
  excludedattributes?: string;
}

export const groupRolesOfRow = (row: repo.GroupRow): Role[] => [
  ...(row.grants_admin === 1 ? (["admin"] as const) : []),
  ...(row.grants_support === 1 ? (["support"] as const) : []),
  ...(row.grants_member === 1 ? (["member"] as const) : []),
];

const CORE_PREFIX = `${SCIM_URN.group}:`.toLowerCase();
export const listOf = (text: string | undefined) =>
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
      version: etagOf(row.version),
      location: `${base}${GROUPS_PATH}/${row.id}`,
    },
  };
}

/** The groups as the request asks for them, their members read only when asked for. */
export async function answer(
  ctx: ServiceContext,
  rows: repo.GroupRow[],
  projection: Projection,
): Promise<Attributes[]> {
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

/** A group as the request asks for it, with its ETag. */
export async function versioned(ctx: ServiceContext, row: repo.GroupRow, projection: Projection) {
  return { body: (await answer(ctx, [row], projection))[0] as Attributes, etag: etagOf(row.version) };
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
