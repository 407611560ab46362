import { Type } from "@sinclair/typebox";
import { routeAccess } from "./policy/operations.js";
import { defineRoute } from "./route.js";

// Deleted Groups kept for a restore (`server start --retain-deleted`, spec 1.10), as deleted Users
// are (deleted-users.ts): admins list them, bring one back, or purge one. /Groups and /Resources
// answer 404 for them, and their roles stopped with the delete.

export const DELETED_GROUPS_PATH = "/DeletedGroups";

const IdParams = Type.Object({ id: Type.String({ maxLength: 256 }) });

export const DeletedGroup = Type.Object({
  id: Type.String(),
  displayName: Type.String(),
  externalId: Type.Union([Type.String(), Type.Null()]),
  roles: Type.Array(Type.String(), { description: "the roles it granted its members, and grants again once restored" }),
  members: Type.Integer({ description: "how many members it had when it was deleted" }),
  deletedAt: Type.String({ description: "when it was deleted (ISO 8601)" }),
  purgeAfter: Type.String({ description: "when it is purged for good unless restored (ISO 8601)" }),
});

const tags = { tags: ["groups"] } as const;

export const listDeletedGroups = defineRoute({
  id: "deleted-groups.list",
  errors: ["forbidden"],
  method: "GET",
  path: DELETED_GROUPS_PATH,
  summary: "List the deleted Groups kept for a restore (admins)",
  ...tags,
  access: routeAccess("groups:list-deleted"),
  responses: { 200: Type.Object({ Resources: Type.Array(DeletedGroup) }) },
});

export const restoreDeletedGroup = defineRoute({
  id: "deleted-groups.restore",
  errors: ["forbidden", "not_found", "conflict"],
  method: "POST",
  path: `${DELETED_GROUPS_PATH}/:id/restore`,
  summary:
    "Bring a deleted Group back: displayName, externalId, roles, and its members that still exist, who get its roles at once (admins)",
  ...tags,
  access: routeAccess("groups:restore"),
  params: IdParams,
  responses: {
    200: Type.Object({
      id: Type.String(),
      displayName: Type.String(),
      roles: Type.Array(Type.String()),
      members: Type.Integer({ description: "how many members it has again" }),
      membersNotRestored: Type.Array(Type.Object({ id: Type.String(), userName: Type.Optional(Type.String()) }), {
        description:
          "its members that are gone: a User deleted meanwhile (with its userName while it is kept: its " +
          "restore brings this membership back) or purged (its id only)",
      }),
    }),
  },
});

export const purgeDeletedGroup = defineRoute({
  id: "deleted-groups.purge",
  errors: ["forbidden", "not_found"],
  method: "DELETE",
  path: `${DELETED_GROUPS_PATH}/:id`,
  summary: "Purge a deleted Group for good, freeing its displayName and externalId (admins)",
  ...tags,
  access: routeAccess("groups:purge"),
  params: IdParams,
  responses: { 204: null },
});

export const deletedGroupRoutes = [listDeletedGroups, restoreDeletedGroup, purgeDeletedGroup] as const;
