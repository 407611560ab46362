import { Type } from "@sinclair/typebox";
import { Timestamp } from "./common.js";
import { routeAccess } from "./policy/operations.js";
import { RESOURCES_PATH } from "./resources.js";
import { API_TOKEN_SCOPES, defineRoute, EVERYONE } from "./route.js";

/** Expiry of a new API token when none is asked for, and the longest one may ask for. */
export const API_TOKEN_DEFAULT_DAYS = 90;
export const API_TOKEN_MAX_DAYS = 366;
/** Every API token begins with it, so that a Bearer credential is told from a JWT without parsing it. */
export const API_TOKEN_PREFIX = "bzt_";

export const ApiTokenScopeName = Type.Union(
  API_TOKEN_SCOPES.map((scope) => Type.Literal(scope)),
  { description: "what the token may do, within what its owner may do" },
);

export const CreateApiToken = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: "what the token is for, for people reading the list",
    }),
    expiresInDays: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: API_TOKEN_MAX_DAYS,
        description: `days until the token expires (${API_TOKEN_DEFAULT_DAYS} when absent)`,
      }),
    ),
    scopes: Type.Optional(
      Type.Array(ApiTokenScopeName, {
        minItems: 1,
        maxItems: API_TOKEN_SCOPES.length,
        description:
          "the scopes the token is limited to (one named twice counts once); absent: every scope (the owner's roles, unnarrowed)",
      }),
    ),
  },
  { additionalProperties: false },
);

/** An API token as listed: never the token itself, nor its hash. */
export const ApiToken = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(ApiTokenScopeName),
  createdAt: Timestamp,
  expiresAt: Timestamp,
  lastUsedAt: Type.Optional(Timestamp),
  /** the client address of the last use (the forwarded one behind --trust-proxy) */
  lastUsedIp: Type.Optional(Type.String()),
});

/** The answer of a creation: the only time the token is shown. */
export const CreatedApiToken = Type.Object({
  token: Type.String({ description: "bzt_ and 32 base62 characters; shown once, kept only as a hash" }),
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(ApiTokenScopeName),
  createdAt: Timestamp,
  expiresAt: Timestamp,
});

const ApiTokenList = Type.Object({ tokens: Type.Array(ApiToken) });

// API tokens manage the account (spec 1.1): only a user's own login creates, lists or revokes them
const own = { roles: EVERYONE, managesAccount: true } as const;

export const createOwn = defineRoute({
  id: "auth.tokens.create",
  method: "POST",
  path: "/auth/tokens",
  summary: "Create an API token for scripts; the answer is the only time the token is shown",
  tags: ["auth"],
  access: own,
  body: CreateApiToken,
  responses: { 201: CreatedApiToken },
});

export const listOwn = defineRoute({
  id: "auth.tokens.list",
  method: "GET",
  path: "/auth/tokens",
  summary: "The caller's API tokens that are not revoked (the expired ones too)",
  tags: ["auth"],
  access: own,
  responses: { 200: ApiTokenList },
});

export const revokeOwn = defineRoute({
  id: "auth.tokens.revoke",
  method: "DELETE",
  path: "/auth/tokens/:id",
  summary: "Revoke one of the caller's API tokens",
  tags: ["auth"],
  access: own,
  params: Type.Object({ id: Type.String({ maxLength: 128 }) }),
  responses: { 204: null },
});

export const listOfUser = defineRoute({
  id: "resources.tokens.list",
  method: "GET",
  path: `${RESOURCES_PATH}/:resourceId/tokens`,
  summary: "A User's API tokens that are not revoked (admin)",
  tags: ["resources"],
  access: routeAccess("tokens:list-other"),
  params: Type.Object({ resourceId: Type.String({ maxLength: 256 }) }),
  responses: { 200: ApiTokenList },
});

export const revokeOfUser = defineRoute({
  id: "resources.tokens.revoke",
  method: "DELETE",
  path: `${RESOURCES_PATH}/:resourceId/tokens/:tokenId`,
  summary: "Revoke one API token of a User (admin)",
  tags: ["resources"],
  access: routeAccess("tokens:revoke-other"),
  params: Type.Object({ resourceId: Type.String({ maxLength: 256 }), tokenId: Type.String({ maxLength: 128 }) }),
  responses: { 204: null },
});

export const apiTokenRoutes = [createOwn, listOwn, revokeOwn, listOfUser, revokeOfUser] as const;
