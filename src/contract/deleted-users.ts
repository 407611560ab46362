import { Type } from "@sinclair/typebox";
import { routeAccess } from "./policy/operations.js";
import { defineRoute } from "./route.js";

// Deleted Users kept for a restore (`server start --retain-deleted`, spec 1.10): admins list them,
// bring one back, or purge one. Every other route answers 404 for them.

export const DELETED_USERS_PATH = "/DeletedUsers";

const IdParams = Type.Object({ id: Type.String({ maxLength: 256 }) });

export const DeletedUser = Type.Object({
  id: Type.String(),
  userName: Type.String(),
  externalId: Type.Union([Type.String(), Type.Null()]),
  deletedAt: Type.String({ description: "when it was deleted (ISO 8601)" }),
  purgeAfter: Type.String({ description: "when it is purged for good unless restored (ISO 8601)" }),
});

const tags = { tags: ["users"] } as const;
// what deletes a User may bring it back or end its wait
const access = routeAccess("users:delete");

export const listDeletedUsers = defineRoute({
  id: "deleted-users.list",
  errors: ["forbidden"],
  method: "GET",
  path: DELETED_USERS_PATH,
  summary: "List the deleted Users kept for a restore (admins)",
  ...tags,
  access,
  responses: { 200: Type.Object({ Resources: Type.Array(DeletedUser) }) },
});

export const restoreDeletedUser = defineRoute({
  id: "deleted-users.restore",
  errors: ["forbidden", "not_found", "conflict"],
  method: "POST",
  path: `${DELETED_USERS_PATH}/:id/restore`,
  summary: "Bring a deleted User back: attributes, roles, groups; no session, token or password (admins)",
  ...tags,
  access,
  params: IdParams,
  responses: {
    200: Type.Object({
      id: Type.String(),
      userName: Type.String(),
      groupsNotRestored: Type.Array(Type.Object({ id: Type.String(), displayName: Type.Optional(Type.String()) }), {
        description:
          "its groups it is not back in: a group deleted meanwhile (with its displayName while it is kept: " +
          "its restore brings this membership back) or purged (its id only)",
      }),
    }),
  },
});

export const purgeDeletedUser = defineRoute({
  id: "deleted-users.purge",
  errors: ["forbidden", "not_found"],
  method: "DELETE",
  path: `${DELETED_USERS_PATH}/:id`,
  summary: "Purge a deleted User for good, freeing its userName and externalId (admins)",
  ...tags,
  access,
  params: IdParams,
  responses: { 204: null },
});

export const deletedUserRoutes = [listDeletedUsers, restoreDeletedUser, purgeDeletedUser] as const;
