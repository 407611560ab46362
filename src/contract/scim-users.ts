import { Type } from "@sinclair/typebox";
import { SearchText } from "./resources.js";
import { defineRoute, EVERYONE } from "./route.js";
import { PatchRequest } from "./scim.js";
import { IdParams, ListResponse, ProjectionQuery, paging, projection } from "./scim-lists.js";

// /Users and /Me: the SCIM endpoints of Users (RFC 7644 section 3), over the same records as the
// Users of /Resources. The representation is SCIM's: the enterprise attributes nested under their
// schema's URN, the account state under bizctl's, `meta.location` under /Users.

export const USERS_PATH = "/Users";
export const ME_PATH = "/Me";

/** Names in lower case: SCIM's query parameter names are case-insensitive (`sortBy`, `startIndex`). */
const UsersQuery = Type.Object(
  {
    filter: Type.Optional(Type.String({ description: "SCIM filter (RFC 7644 section 3.4.2.2)" })),
    search: Type.Optional(SearchText),
    sortby: Type.Optional(Type.String({ maxLength: 256, description: "attribute path to sort by" })),
    sortorder: Type.Optional(Type.String({ description: "ascending (default) or descending" })),
    ...paging,
    ...projection(),
  },
  { additionalProperties: false },
);

const UserProjection = ProjectionQuery();

/** A User in SCIM's representation: its attributes beside these are described by /Schemas. */
export const ScimUser = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    id: Type.String(),
    meta: Type.Optional(
      Type.Object({
        resourceType: Type.String(),
        created: Type.String(),
        lastModified: Type.String(),
        version: Type.String(),
        location: Type.String(),
      }),
    ),
  },
  { additionalProperties: true },
);

/**
 * A User as a SCIM client sends it: the core attributes, the enterprise extension nested under
 * its URN (or at the top level), `null` for an attribute it leaves unassigned. The read-only
 * members (`id`, `meta`, `groups`, the account state) are ignored.
 */
export const ScimUserInput = Type.Object(
  { schemas: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: 10 })) },
  { additionalProperties: true, description: "a User (RFC 7643 section 4.1, with the enterprise extension)" },
);

const users = { tags: ["users"], scim: "wire" } as const;
const reads = { roles: EVERYONE, scope: "resources:read" } as const;
const writes = { roles: EVERYONE, scope: "resources:write" } as const;

export const listUsers = defineRoute({
  id: "users.list",
  method: "GET",
  path: USERS_PATH,
  summary: "List Users (SCIM ListResponse): members see their own",
  ...users,
  access: reads,
  query: UsersQuery,
  responses: { 200: ListResponse(ScimUser) },
});

export const getUser = defineRoute({
  id: "users.get",
  etag: true,
  method: "GET",
  path: `${USERS_PATH}/:id`,
  summary: "Read one User",
  ...users,
  access: reads,
  params: IdParams,
  query: UserProjection,
  responses: { 200: ScimUser },
});

export const createUser = defineRoute({
  id: "users.create",
  errors: ["forbidden", "conflict", "weak_password", "last_admin", "service_account"],
  etag: true,
  method: "POST",
  path: USERS_PATH,
  summary: "Create a User (admins; a password given here is temporary)",
  ...users,
  access: writes,
  body: ScimUserInput,
  responses: { 201: ScimUser },
});

export const replaceUser = defineRoute({
  id: "users.replace",
  errors: ["forbidden", "conflict", "weak_password", "last_admin", "service_account"],
  etag: true,
  method: "PUT",
  path: `${USERS_PATH}/:id`,
  summary: "Replace a User (honours If-Match)",
  ...users,
  access: writes,
  params: IdParams,
  body: ScimUserInput,
  responses: { 200: ScimUser },
});

export const patchUser = defineRoute({
  id: "users.patch",
  errors: ["forbidden", "conflict", "weak_password", "last_admin", "service_account"],
  etag: true,
  method: "PATCH",
  path: `${USERS_PATH}/:id`,
  summary:
    "Change a User with PATCH operations (RFC 7644 section 3.5.2): its result is written as a PUT of it would be (honours If-Match)",
  ...users,
  access: writes,
  params: IdParams,
  body: PatchRequest,
  responses: { 200: ScimUser },
});

export const deleteUser = defineRoute({
  id: "users.delete",
  errors: ["forbidden", "conflict", "last_admin"],
  etag: true,
  method: "DELETE",
  path: `${USERS_PATH}/:id`,
  summary: "Delete a User (honours If-Match)",
  ...users,
  access: writes,
  params: IdParams,
  responses: { 204: null },
});

export const getMe = defineRoute({
  id: "me.get",
  etag: true,
  method: "GET",
  path: ME_PATH,
  summary: "The caller's own User (RFC 7644 section 3.11)",
  ...users,
  access: reads,
  query: UserProjection,
  responses: { 200: ScimUser },
});

export const replaceMe = defineRoute({
  id: "me.replace",
  errors: ["forbidden", "conflict", "weak_password", "last_admin", "service_account"],
  etag: true,
  method: "PUT",
  path: ME_PATH,
  summary: "Replace the caller's own User, under the same rules as any User (honours If-Match)",
  ...users,
  access: writes,
  body: ScimUserInput,
  responses: { 200: ScimUser },
});

export const patchMe = defineRoute({
  id: "me.patch",
  errors: ["forbidden", "conflict", "weak_password", "last_admin", "service_account"],
  etag: true,
  method: "PATCH",
  path: ME_PATH,
  summary: "Change the caller's own User with PATCH operations, under the same rules as any User (honours If-Match)",
  ...users,
  access: writes,
  body: PatchRequest,
  responses: { 200: ScimUser },
});

export const userRoutes = [
  listUsers,
  getUser,
  createUser,
  replaceUser,
  patchUser,
  deleteUser,
  getMe,
  replaceMe,
  patchMe,
] as const;
