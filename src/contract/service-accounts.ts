import { Type } from "@sinclair/typebox";
import { CreateApiToken, CreatedApiToken } from "./api-tokens.js";
import { Timestamp } from "./common.js";
import { routeAccess } from "./policy/operations.js";
import { defineRoute, ROLES } from "./route.js";

/** Service accounts (spec 1.9): Users that are not people, acting only through API tokens an admin makes. */
export const SERVICE_ACCOUNTS_PATH = "/ServiceAccounts";

const RoleName = Type.Union(ROLES.map((role) => Type.Literal(role)));

export const CreateServiceAccount = Type.Object(
  {
    userName: Type.String({ minLength: 1, maxLength: 256, description: "the account's name, unique among Users" }),
    displayName: Type.Optional(Type.String({ maxLength: 256 })),
    roles: Type.Array(RoleName, { minItems: 1, maxItems: ROLES.length, description: "its roles (direct)" }),
  },
  { additionalProperties: false },
);

export const ServiceAccount = Type.Object({
  id: Type.String(),
  userName: Type.String(),
  displayName: Type.Optional(Type.String()),
  roles: Type.Array(RoleName),
  active: Type.Boolean(),
  created: Timestamp,
});

const access = routeAccess("service-accounts:manage");

export const create = defineRoute({
  tags: ["service-accounts"],
  access,
  id: "serviceAccounts.create",
  method: "POST",
  path: SERVICE_ACCOUNTS_PATH,
  summary: "Create a service account: a User with no password, no second factor and no login (admin)",
  body: CreateServiceAccount,
  responses: { 201: ServiceAccount },
});

export const list = defineRoute({
  tags: ["service-accounts"],
  access,
  id: "serviceAccounts.list",
  method: "GET",
  path: SERVICE_ACCOUNTS_PATH,
  summary: "The service accounts (admin)",
  responses: { 200: Type.Object({ serviceAccounts: Type.Array(ServiceAccount) }) },
});

export const createToken = defineRoute({
  tags: ["service-accounts"],
  access,
  id: "serviceAccounts.tokens.create",
  method: "POST",
  path: `${SERVICE_ACCOUNTS_PATH}/:id/tokens`,
  summary:
    "Create an API token of a service account; the answer is the only time the token is shown (admin). List and revoke them with /Resources/{id}/tokens",
  params: Type.Object({ id: Type.String({ maxLength: 256 }) }),
  body: CreateApiToken,
  responses: { 201: CreatedApiToken },
});

export const serviceAccountRoutes = [create, list, createToken] as const;
