import { Type } from "@sinclair/typebox";
import { defineRoute, EVERYONE } from "./route.js";

export const BULK_PATH = "/Bulk";

export const BULK_URN = {
  request: "urn:ietf:params:scim:api:messages:2.0:BulkRequest",
  response: "urn:ietf:params:scim:api:messages:2.0:BulkResponse",
  error: "urn:ietf:params:scim:api:messages:2.0:Error",
} as const;

/**
 * The most operations one bulk request may hold (413 beyond). The payload limit is the server's
 * body limit (`bodyLimitBytes`), advertised in /ServiceProviderConfig beside this (contract/scim-discovery.ts).
 */
export const BULK_MAX_OPERATIONS = 1000;

/** The prefix by which an operation names a resource another operation of the request creates. */
export const BULK_ID_PREFIX = "bulkId:";

export const BulkOperation = Type.Object(
  {
    method: Type.String({ maxLength: 16, description: "POST, PUT, PATCH or DELETE" }),
    path: Type.String({
      maxLength: 1024,
      description: "/Resources, /Resources/{id}, /Resources/{id}/invitation; /Users… also; {id} may be bulkId:…",
    }),
    bulkId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: "required with POST; others refer to it" }),
    ),
    version: Type.Optional(Type.String({ maxLength: 256, description: "the ETag the resource must have (If-Match)" })),
    data: Type.Optional(Type.Unknown({ description: "the body of the operation" })),
  },
  { additionalProperties: false },
);

export const BulkRequest = Type.Object(
  {
    schemas: Type.Array(Type.String({ maxLength: 256 }), { maxItems: 10 }),
    failOnErrors: Type.Optional(
      Type.Integer({ minimum: 1, description: "stop after this many failed operations (all run without it)" }),
    ),
    Operations: Type.Array(BulkOperation),
  },
  { additionalProperties: false },
);

export const BulkOperationResult = Type.Object({
  method: Type.String(),
  bulkId: Type.Optional(Type.String()),
  location: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  status: Type.String({ description: "the HTTP status of the operation, as a string (RFC 7644)" }),
  response: Type.Optional(
    Type.Unknown({ description: "a SCIM error (with our problem code) when it failed; the answer of an invitation" }),
  ),
});

export const bulk = defineRoute({
  id: "bulk",
  method: "POST",
  path: BULK_PATH,
  summary:
    "Run many resource writes in one request (RFC 7644 section 3.7): each operation as its single request would, each in its own transaction",
  tags: ["resources"],
  access: { roles: EVERYONE, scope: "resources:write" },
  scim: "wire",
  body: BulkRequest,
  responses: {
    200: Type.Object({ schemas: Type.Array(Type.String()), Operations: Type.Array(BulkOperationResult) }),
  },
});

export const bulkRoutes = [bulk] as const;
