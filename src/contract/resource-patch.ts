import { Type } from "@sinclair/typebox";
import { RESOURCES_PATH, Resource } from "./resources.js";
import { defineRoute, EVERYONE } from "./route.js";
import { PatchRequest } from "./scim.js";

/**
 * PATCH /Resources/{id} (RFC 7644 section 3.5.2) on a resource of any type: its result is written
 * as a PUT of it would be, under the same rules. Beside the /Resources operations of resources.ts.
 */
export const patchResource = defineRoute({
  id: "resources.patch",
  errors: ["forbidden", "conflict", "weak_password", "last_admin", "service_account"],
  etag: true,
  method: "PATCH",
  path: `${RESOURCES_PATH}/:resourceId`,
  summary: "Change a resource with PATCH operations: add, replace, remove (honours If-Match)",
  tags: ["resources"],
  access: { roles: EVERYONE, scope: "resources:write" },
  params: Type.Object({ resourceId: Type.String({ maxLength: 256 }) }),
  body: PatchRequest,
  responses: { 200: Resource },
});

export const resourcePatchRoutes = [patchResource] as const;
