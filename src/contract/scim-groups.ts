import { Type } from "@sinclair/typebox";
import { routeAccess } from "./policy/operations.js";
import { defineRoute, STAFF } from "./route.js";
import { PatchRequest } from "./scim.js";
import { IdParams, ListResponse, ProjectionQuery, paging, projection } from "./scim-lists.js";

// /Groups: SCIM Groups (RFC 7643 section 4.2, RFC 7644 section 3), what identity providers push
// (spec 1.9). Members are Users; the roles a group grants sit under bizctl's Group extension.

export const GROUPS_PATH = "/Groups";

const MEMBERS_LEFT_OUT = "to leave out (`members`: a group without its members)";

/** Names in lower case: SCIM's query parameter names are case-insensitive. */
const GroupsQuery = Type.Object(
  {
    filter: Type.Optional(
      Type.String({ maxLength: 2048, description: 'displayName eq "..." or externalId eq "..." (RFC 7644 3.4.2.2)' }),
    ),
    ...paging,
    ...projection(MEMBERS_LEFT_OUT),
  },
  { additionalProperties: false },
);

const GroupProjection = ProjectionQuery(MEMBERS_LEFT_OUT);

/** A Group in SCIM's representation (RFC 7643 section 4.2). */
export const ScimGroup = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    id: Type.String(),
    displayName: Type.Optional(Type.String()),
    externalId: Type.Optional(Type.String()),
    members: Type.Optional(
      Type.Array(
        // also `$ref`, the User's URI (a property name JSON Schema tools would read as a reference)
        Type.Object(
          { value: Type.String(), display: Type.Optional(Type.String()), type: Type.Optional(Type.String()) },
          { additionalProperties: true },
        ),
      ),
    ),
  },
  { additionalProperties: true },
);

/** A Group as a client sends it: `displayName`, `externalId`, `members` and the roles extension. */
export const ScimGroupInput = Type.Object(
  { schemas: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: 10 })) },
  { additionalProperties: true, description: "a Group (RFC 7643 section 4.2, with bizctl's roles extension)" },
);

const groups = { tags: ["groups"], scim: "wire" } as const;
const access = (operation: Parameters<typeof routeAccess>[0]) => routeAccess(operation);
/** support changes the members of a group that grants neither admin nor support: the service decides on the group */
const memberChanges = { ...routeAccess("groups:change-members"), roles: STAFF };

export const listGroups = defineRoute({
  id: "groups.list",
  errors: ["validation_failed"],
  method: "GET",
  path: GROUPS_PATH,
  summary: "List Groups by displayName (SCIM ListResponse), filtered by displayName or externalId",
  ...groups,
  access: access("groups:read"),
  query: GroupsQuery,
  responses: { 200: ListResponse(ScimGroup) },
});

export const getGroup = defineRoute({
  id: "groups.get",
  etag: true,
  method: "GET",
  path: `${GROUPS_PATH}/:id`,
  summary: "Read one Group (excludedAttributes=members: without its members)",
  ...groups,
  access: access("groups:read"),
  params: IdParams,
  query: GroupProjection,
  responses: { 200: ScimGroup },
});

export const createGroup = defineRoute({
  id: "groups.create",
  etag: true,
  errors: ["forbidden", "conflict"],
  method: "POST",
  path: GROUPS_PATH,
  summary: "Create a Group (admins); displayName is unique in any case",
  ...groups,
  access: access("groups:create"),
  body: ScimGroupInput,
  responses: { 201: ScimGroup },
});

export const replaceGroup = defineRoute({
  id: "groups.replace",
  etag: true,
  errors: ["forbidden", "conflict", "last_admin"],
  method: "PUT",
  path: `${GROUPS_PATH}/:id`,
  summary:
    "Replace a Group: its name, externalId and members (its roles stay unless the extension is sent; honours If-Match)",
  ...groups,
  access: memberChanges,
  params: IdParams,
  body: ScimGroupInput,
  responses: { 200: ScimGroup },
});

export const patchGroup = defineRoute({
  id: "groups.patch",
  etag: true,
  errors: ["forbidden", "conflict", "last_admin"],
  method: "PATCH",
  path: `${GROUPS_PATH}/:id`,
  summary:
    "Change a Group with PATCH operations (RFC 7644 section 3.5.2): members added and removed one by one; 204 unless `attributes` asks for the group",
  ...groups,
  access: memberChanges,
  params: IdParams,
  query: GroupProjection,
  body: PatchRequest,
  responses: { 200: ScimGroup, 204: null },
});

export const deleteGroup = defineRoute({
  id: "groups.delete",
  etag: true,
  errors: ["forbidden", "last_admin"],
  method: "DELETE",
  path: `${GROUPS_PATH}/:id`,
  summary: "Delete a Group (admins; honours If-Match): its members lose the roles it granted at once",
  ...groups,
  access: access("groups:delete"),
  params: IdParams,
  responses: { 204: null },
});

export const groupRoutes = [listGroups, getGroup, createGroup, replaceGroup, patchGroup, deleteGroup] as const;
