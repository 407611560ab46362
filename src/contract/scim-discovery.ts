import { type TSchema, Type } from "@sinclair/typebox";
import { defineRoute } from "./route.js";

// The SCIM discovery endpoints (RFC 7644 section 4): what the service supports, its resource
// types and their schemas (RFC 7643 sections 5-7). Public: they describe the API, not its data.

const Meta = Type.Object({ resourceType: Type.String(), location: Type.String() });

const listOf = <T extends TSchema>(item: T) =>
  Type.Object({
    schemas: Type.Array(Type.String()),
    totalResults: Type.Integer(),
    itemsPerPage: Type.Integer(),
    startIndex: Type.Integer(),
    Resources: Type.Array(item),
  });

/** What the server supports, its limits included (RFC 7643 section 5). */
export const serviceProviderConfig = defineRoute({
  id: "service.providerConfig",
  method: "GET",
  path: "/ServiceProviderConfig",
  summary:
    "What the SCIM service supports: PATCH, bulk and its limits, filter, sort, ETags, authentication (RFC 7643 section 5)",
  tags: ["service"],
  access: { public: true },
  scim: "wire",
  responses: {
    200: Type.Object({
      schemas: Type.Array(Type.String()),
      documentationUri: Type.Optional(Type.String()),
      patch: Type.Object({ supported: Type.Boolean() }),
      bulk: Type.Object({ supported: Type.Boolean(), maxOperations: Type.Integer(), maxPayloadSize: Type.Integer() }),
      filter: Type.Object({ supported: Type.Boolean(), maxResults: Type.Integer() }),
      changePassword: Type.Object({ supported: Type.Boolean() }),
      sort: Type.Object({ supported: Type.Boolean() }),
      etag: Type.Object({ supported: Type.Boolean() }),
      authenticationSchemes: Type.Array(
        Type.Object({
          type: Type.String(),
          name: Type.String(),
          description: Type.String(),
          specUri: Type.Optional(Type.String()),
          primary: Type.Optional(Type.Boolean()),
        }),
      ),
      meta: Meta,
    }),
  },
});

export const ResourceType = Type.Object({
  schemas: Type.Array(Type.String()),
  id: Type.String(),
  name: Type.String(),
  endpoint: Type.String(),
  description: Type.String(),
  schema: Type.String(),
  schemaExtensions: Type.Optional(Type.Array(Type.Object({ schema: Type.String(), required: Type.Boolean() }))),
  meta: Meta,
});

/** One attribute of a schema (RFC 7643 section 7), its sub-attributes alike. */
const SchemaAttribute = Type.Object(
  {
    name: Type.String(),
    type: Type.String(),
    multiValued: Type.Boolean(),
    description: Type.String(),
    required: Type.Boolean(),
    caseExact: Type.Boolean(),
    mutability: Type.String(),
    returned: Type.String(),
    uniqueness: Type.String(),
  },
  { additionalProperties: true },
);

export const SchemaDocument = Type.Object({
  schemas: Type.Array(Type.String()),
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  attributes: Type.Array(SchemaAttribute),
  meta: Meta,
});

export const listResourceTypes = defineRoute({
  id: "service.resourceTypes",
  method: "GET",
  path: "/ResourceTypes",
  summary: "The resource types of the SCIM service (RFC 7643 section 6)",
  tags: ["service"],
  access: { public: true },
  scim: "wire",
  responses: { 200: listOf(ResourceType) },
});

export const getResourceType = defineRoute({
  id: "service.resourceType",
  method: "GET",
  path: "/ResourceTypes/:name",
  summary: "One resource type of the SCIM service, by name",
  tags: ["service"],
  access: { public: true },
  scim: "wire",
  params: Type.Object({ name: Type.String({ maxLength: 64 }) }),
  responses: { 200: ResourceType },
});

export const listSchemas = defineRoute({
  id: "service.schemas",
  method: "GET",
  path: "/Schemas",
  summary: "The schemas of the SCIM service's resources, attribute by attribute (RFC 7643 section 7)",
  tags: ["service"],
  access: { public: true },
  scim: "wire",
  responses: { 200: listOf(SchemaDocument) },
});

export const getSchema = defineRoute({
  id: "service.schema",
  method: "GET",
  path: "/Schemas/:id",
  summary: "One schema of the SCIM service, by its URN",
  tags: ["service"],
  access: { public: true },
  scim: "wire",
  params: Type.Object({ id: Type.String({ maxLength: 256 }) }),
  responses: { 200: SchemaDocument },
});

export const discoveryRoutes = [
  serviceProviderConfig,
  listResourceTypes,
  getResourceType,
  listSchemas,
  getSchema,
] as const;
