import { BULK_MAX_OPERATIONS } from "../../contract/bulk.js";
import { LIST_COUNT, RESOURCES_PATH, SCHEMA_URN } from "../../contract/resources.js";
import { SCIM_URN } from "../../contract/scim.js";
import { ProblemError } from "../problem-error.js";
import { schemaDefinitions } from "./scim-schemas.js";
import type { ServiceContext } from "./service-context.js";

// The SCIM discovery endpoints (RFC 7644 section 4): what a client may rely on, the resource
// types and their schemas. Each says what the server does, nothing it does not.

const USERS_PATH = "/Users";

/** What the configuration decides of what the service supports. */
export interface Capabilities {
  bodyLimitBytes: number;
}

const listResponse = <T>(resources: T[]) => ({
  schemas: [SCIM_URN.listResponse],
  totalResults: resources.length,
  itemsPerPage: resources.length,
  startIndex: 1,
  Resources: resources,
});

/** GET /ServiceProviderConfig (RFC 7643 section 5). */
export function serviceProviderConfig(ctx: ServiceContext, capabilities: Capabilities) {
  return {
    schemas: [SCIM_URN.serviceProviderConfig],
    patch: { supported: true },
    bulk: { supported: true, maxOperations: BULK_MAX_OPERATIONS, maxPayloadSize: capabilities.bodyLimitBytes },
    filter: { supported: true, maxResults: LIST_COUNT.max },
    // a password in a PUT (or PATCH) of a User sets a temporary one
    changePassword: { supported: true },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: "oauthbearertoken",
        name: "Bearer token",
        description: "A JWT from POST /auth/login in Authorization: Bearer.",
        specUri: "https://www.rfc-editor.org/info/rfc6750",
        primary: true,
      },
      {
        type: "oauth",
        name: "OAuth 1.0a",
        description: "A request signed with OAuth 1.0a token credentials (HMAC-SHA1, HMAC-SHA256 or RSA-SHA1).",
        specUri: "https://www.rfc-editor.org/info/rfc5849",
      },
    ],
    meta: { resourceType: "ServiceProviderConfig", location: `${ctx.publicUrl ?? ""}/ServiceProviderConfig` },
  };
}

function resourceTypeList(ctx: ServiceContext) {
  const meta = (name: string) => ({
    resourceType: "ResourceType",
    location: `${ctx.publicUrl ?? ""}/ResourceTypes/${name}`,
  });
  return [
    {
      schemas: [SCIM_URN.resourceType],
      id: "User",
      name: "User",
      endpoint: USERS_PATH,
      description: "User Account",
      schema: SCHEMA_URN.user,
      schemaExtensions: [
        { schema: SCHEMA_URN.enterpriseUser, required: false },
        { schema: SCIM_URN.account, required: false },
      ],
      meta: meta("User"),
    },
    {
      schemas: [SCIM_URN.resourceType],
      id: "Group",
      name: "Group",
      endpoint: "/Groups",
      description: "Group of Users: the roles it grants its members are under bizctl's extension",
      schema: SCIM_URN.group,
      schemaExtensions: [{ schema: SCIM_URN.groupRoles, required: false }],
      meta: meta("Group"),
    },
    {
      schemas: [SCIM_URN.resourceType],
      id: "OAuthConsumer",
      name: "OAuthConsumer",
      endpoint: RESOURCES_PATH,
      description: "OAuth 1.0a consumer, written through /Resources with resourceType OAuthConsumer",
      schema: SCHEMA_URN.oauthConsumer,
      meta: meta("OAuthConsumer"),
    },
  ];
}

/** GET /ResourceTypes. Custom types hold free-form attributes and have no schema: they are not listed. */
export function listResourceTypes(ctx: ServiceContext) {
  return listResponse(resourceTypeList(ctx));
}

export function getResourceType(ctx: ServiceContext, name: string) {
  const found = resourceTypeList(ctx).find((type) => type.id.toLowerCase() === name.toLowerCase());
  if (!found) throw new ProblemError("not_found", `No resource type named ${name}.`);
  return found;
}

function schemaList(ctx: ServiceContext) {
  return schemaDefinitions().map((definition) => ({
    schemas: [SCIM_URN.schema],
    ...definition,
    meta: { resourceType: "Schema", location: `${ctx.publicUrl ?? ""}/Schemas/${definition.id}` },
  }));
}

/** GET /Schemas. */
export function listSchemas(ctx: ServiceContext) {
  return listResponse(schemaList(ctx));
}

export function getSchema(ctx: ServiceContext, id: string) {
  const found = schemaList(ctx).find((schema) => schema.id.toLowerCase() === id.toLowerCase());
  if (!found) throw new ProblemError("not_found", `No schema ${id}.`);
  return found;
}
