import { Type } from "@sinclair/typebox";
import { routeAccess } from "./policy/index.js";
import { defineRoute } from "./route.js";
import { USERS_PATH } from "./scim-users.js";

export const AccessExplanation = Type.Object({
  id: Type.String(),
  userName: Type.String(),
  operation: Type.String({ description: "the policy operation asked about (src/contract/policy/operations.ts)" }),
  allowed: Type.Boolean(),
  roles: Type.Array(
    Type.Object({
      role: Type.String(),
      source: Type.String({ description: "`direct`, or the name of the group that grants it" }),
    }),
    { description: "the user's effective roles, each with every source that grants it" },
  ),
  token: Type.Optional(
    Type.Object(
      { id: Type.String(), name: Type.String(), scopes: Type.Array(Type.String()) },
      { description: "the API token asked about (admin only)" },
    ),
  ),
  target: Type.Optional(Type.Object({ id: Type.String(), userName: Type.String(), roles: Type.Array(Type.String()) })),
  reasons: Type.Array(
    Type.Object({
      rule: Type.String({
        description: "stable: roles, delegated-credential, token-scope, grant, least-privilege, no-grant",
      }),
      detail: Type.String(),
    }),
    { description: "the facts the decision rests on, in the order the policy meets them; the last decides" },
  ),
  refusal: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});

/**
 * GET /Users/{id}/access?operation=... (spec 1.11): whether the User may do the operation, and the
 * facts behind the answer, decided by the same policy the server enforces (admin and support).
 */
export const explainAccess = defineRoute({
  id: "access.explain",
  method: "GET",
  path: `${USERS_PATH}/:id/access`,
  summary:
    "Whether a User may do a policy operation, and why: effective roles and their sources, least privilege, a token's scopes (admin and support)",
  tags: ["users"],
  scim: "wire",
  access: routeAccess("users:explain-access"),
  params: Type.Object({ id: Type.String({ maxLength: 256 }) }),
  query: Type.Object({
    operation: Type.String({ maxLength: 64, description: "a policy operation id, such as users:set-password" }),
    token: Type.Optional(Type.String({ maxLength: 256, description: "an API token id of the user: its scopes count" })),
    target: Type.Optional(Type.String({ maxLength: 256, description: "the id of the User the operation is aimed at" })),
  }),
  errors: ["validation_failed", "forbidden", "not_found"],
  responses: { 200: AccessExplanation },
});

export const accessRoutes = [explainAccess] as const;
