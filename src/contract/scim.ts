import { Type } from "@sinclair/typebox";
import { FieldError } from "./errors.js";
import { SCHEMA_URN, USER_ACCOUNT_STATE } from "./resources.js";

// What the SCIM endpoints (RFC 7643, RFC 7644) share: their media type, their message URNs,
// their error body, and where a User's attributes sit in the SCIM representation.

/** The media type of SCIM requests and answers (RFC 7644 section 3.1); application/json is accepted too. */
export const SCIM_MEDIA_TYPE = "application/scim+json";

export const SCIM_URN = {
  error: "urn:ietf:params:scim:api:messages:2.0:Error",
  patchOp: "urn:ietf:params:scim:api:messages:2.0:PatchOp",
  listResponse: SCHEMA_URN.listResponse,
  schema: "urn:ietf:params:scim:schemas:core:2.0:Schema",
  resourceType: "urn:ietf:params:scim:schemas:core:2.0:ResourceType",
  serviceProviderConfig: "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig",
  /** bizctl's read-only account state of a User (firstLogin, locked, lastLogin...) */
  account: "urn:bizctl:schemas:extension:account:2.0:User",
  /** RFC 7643 section 4.2 */
  group: "urn:ietf:params:scim:schemas:core:2.0:Group",
  /** bizctl's extension of the Group: the roles it grants its members (admins set them) */
  groupRoles: "urn:bizctl:schemas:extension:roles:2.0:Group",
} as const;

/** The most member changes one PATCH of a Group may carry (adds and removes counted together). */
export const GROUP_PATCH_MAX_MEMBERS = 1000;

/** The attributes of the enterprise User extension (RFC 7643 section 4.3): nested under its URN on /Users. */
export const ENTERPRISE_ATTRIBUTES = [
  "employeeNumber",
  "costCenter",
  "organization",
  "division",
  "department",
  "manager",
] as const;

/** The read-only account state of a User: nested under SCIM_URN.account on /Users. */
export const ACCOUNT_ATTRIBUTES = ["firstLogin", ...USER_ACCOUNT_STATE] as const;

/**
 * A SCIM error (RFC 7644 section 3.12) as the SCIM endpoints answer it. `status` is a string, as
 * SCIM writes it; `code` and `title` (and `type`, `requestId`, `errors`) are the problem
 * document's members, kept so that a client reads it like any problem document.
 */
export const ScimError = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    status: Type.String({ description: "the HTTP status, as a string" }),
    scimType: Type.Optional(Type.String({ description: "invalidFilter, invalidSyntax, uniqueness, mutability..." })),
    detail: Type.String(),
    code: Type.String(),
    title: Type.String(),
    type: Type.String(),
    requestId: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(FieldError)),
  },
  { $id: "ScimError" },
);

/** One operation of a PATCH (RFC 7644 section 3.5.2). */
export const PatchOperation = Type.Object(
  {
    op: Type.String({ minLength: 1, maxLength: 16, description: "add, replace or remove, in any case" }),
    path: Type.Optional(
      Type.String({
        maxLength: 2048,
        description: 'an attribute path, or a value path such as emails[type eq "work"].value; none: the resource',
      }),
    ),
    value: Type.Optional(
      Type.Unknown({ description: "what add and replace write; without a path, an object of attributes" }),
    ),
  },
  { additionalProperties: false },
);

/** The body of a PATCH: a PatchOp message whose operations apply in order, all or none. */
export const PatchRequest = Type.Object(
  {
    schemas: Type.Array(Type.String({ maxLength: 256 }), {
      maxItems: 10,
      description: `must include ${SCIM_URN.patchOp}`,
    }),
    Operations: Type.Array(PatchOperation, { minItems: 1, maxItems: 1000 }),
  },
  { additionalProperties: false },
);
