import { type TSchema, Type } from "@sinclair/typebox";
import { QueryInteger, RoleName } from "./common.js";
import { defineRoute, EVERYONE } from "./route.js";

export const RESOURCES_PATH = "/Resources";
export const CUSTOM_TYPE_PATTERN = "^[A-Z][A-Za-z0-9]{0,63}$";
export const CUSTOM_ATTRIBUTES_MAX_BYTES = 64 * 1024;
export const LIST_COUNT = { default: 50, max: 500 } as const;
export const BUILT_IN_TYPES = ["User", "OAuthConsumer"] as const;

/**
 * Why a name is not a resource type, said for a person rather than as the pattern: a type name
 * starts with a capital letter, then letters and digits (64 at most); `user` is most likely `User`.
 */
export function notATypeName(name: string): string {
  const known = BUILT_IN_TYPES.find((type) => type.toLowerCase() === name.toLowerCase());
  const guess = known ?? (/^[a-z][A-Za-z0-9]{0,63}$/.test(name) ? name[0]!.toUpperCase() + name.slice(1) : undefined);
  return `'${name}' is not a resource type: a type name starts with a capital letter, followed by up to 63 letters and digits (User, OAuthConsumer, or your own such as Room)${guess ? `; did you mean '${guess}'?` : "."}`;
}
/**
 * A userName is an identifier, typed at a login prompt and written into e-mails and logs: it may
 * not hold C0, DEL, C1 or bidi controls. Free text (displayName, event names…) may hold them; the
 * CLI shows them in a visible form on a terminal.
 */
/**
 * What makes two user names the same (RFC 8265's UsernameCaseMapped, near enough): the name in
 * Unicode NFC, lower-cased, so that `josé` typed precomposed or decomposed is one name. Names
 * are stored in NFC; uniqueness, the login and `userName eq` compare this key.
 */
export const userNameKey = (userName: string): string => userName.normalize("NFC").toLowerCase();

export const USER_NAME_PATTERN = "^[^\\u0000-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069]+$";

/**
 * Where a User's password stands: `none` (it cannot log in until a reset link, an invitation or a
 * temporary password gives it one), `temporary` (set by an admin or support, to be changed at the
 * next login) or `set` (its own).
 */
export const PASSWORD_STATES = ["none", "temporary", "set"] as const;
export type PasswordState = (typeof PASSWORD_STATES)[number];

/** A User's read-only account state, shown to admin and support beside its attributes. */
export const USER_ACCOUNT_STATE = [
  "passwordState",
  "locked",
  "lockedUntil",
  "failedLogins",
  "lastLogin",
  "passwordChangedAt",
  "openSessions",
  "invited",
  "mfaEnabled",
  "serviceAccount",
] as const;

export const SCHEMA_URN = {
  user: "urn:ietf:params:scim:schemas:core:2.0:User",
  enterpriseUser: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
  oauthConsumer: "urn:bizctl:schemas:OAuthConsumer",
  custom: (type: string) => `urn:bizctl:schemas:${type}`,
  listResponse: "urn:ietf:params:scim:api:messages:2.0:ListResponse",
} as const;

const Str = (maxLength = 256) => Type.String({ maxLength });
const strict = <T extends Record<string, TSchema>>(properties: T) =>
  Type.Object(properties, { additionalProperties: false });

const MultiValued = (extra: Record<string, TSchema> = {}) =>
  Type.Array(
    strict({
      value: Type.Optional(Str(2048)),
      display: Type.Optional(Str()),
      type: Type.Optional(Str(64)),
      primary: Type.Optional(Type.Boolean()),
      ...extra,
    }),
    { maxItems: 100 },
  );

/** Attributes common to every resource. */
const commonInput = {
  resourceType: Type.Optional(Type.String({ pattern: CUSTOM_TYPE_PATTERN })),
  schemas: Type.Optional(Type.Array(Str(), { maxItems: 10 })),
  externalId: Type.Optional(Str()),
  /** accepted on PUT when it equals the path's id; refused on create */
  id: Type.Optional(Str()),
  /** read-only; accepted and ignored on PUT so that a GET-modify-PUT round trip works */
  meta: Type.Optional(Type.Unknown()),
};

/** The SCIM core User (RFC 7643 section 4.1) and the enterprise attributes we keep. */
export const UserInput = strict({
  ...commonInput,
  userName: Type.String({ minLength: 1, maxLength: 256, pattern: USER_NAME_PATTERN }),
  name: Type.Optional(
    strict({
      formatted: Type.Optional(Str()),
      familyName: Type.Optional(Str()),
      givenName: Type.Optional(Str()),
      middleName: Type.Optional(Str()),
      honorificPrefix: Type.Optional(Str()),
      honorificSuffix: Type.Optional(Str()),
    }),
  ),
  displayName: Type.Optional(Str()),
  nickName: Type.Optional(Str()),
  profileUrl: Type.Optional(Str(2048)),
  title: Type.Optional(Str()),
  userType: Type.Optional(Str()),
  preferredLanguage: Type.Optional(Str(64)),
  locale: Type.Optional(Str(64)),
  timezone: Type.Optional(Str(64)),
  active: Type.Optional(Type.Boolean()),
  password: Type.Optional(
    Type.String({ minLength: 1, maxLength: 4096, writeOnly: true, description: "sets a temporary password" }),
  ),
  passwordHash: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 512,
      writeOnly: true,
      description:
        "on create only: the user's password hash from another system, bcrypt (modular crypt $2a$/$2b$/$2y$) or argon2id (PHC string); it becomes argon2id at the first login",
    }),
  ),
  emails: Type.Optional(MultiValued()),
  phoneNumbers: Type.Optional(MultiValued()),
  ims: Type.Optional(MultiValued()),
  photos: Type.Optional(MultiValued()),
  addresses: Type.Optional(
    Type.Array(
      strict({
        formatted: Type.Optional(Str(1024)),
        streetAddress: Type.Optional(Str(1024)),
        locality: Type.Optional(Str()),
        region: Type.Optional(Str()),
        postalCode: Type.Optional(Str(64)),
        country: Type.Optional(Str(64)),
        type: Type.Optional(Str(64)),
        primary: Type.Optional(Type.Boolean()),
      }),
      { maxItems: 20 },
    ),
  ),
  entitlements: Type.Optional(MultiValued()),
  roles: Type.Optional(
    Type.Array(
      strict({
        value: RoleName,
        display: Type.Optional(Str()),
        type: Type.Optional(Str(64)),
        primary: Type.Optional(Type.Boolean()),
      }),
      { maxItems: 3 },
    ),
  ),
  x509Certificates: Type.Optional(MultiValued()),
  employeeNumber: Type.Optional(Str(64)),
  costCenter: Type.Optional(Str()),
  organization: Type.Optional(Str()),
  division: Type.Optional(Str()),
  department: Type.Optional(Str()),
  manager: Type.Optional(
    strict({ value: Type.Optional(Str()), $ref: Type.Optional(Str(2048)), displayName: Type.Optional(Str()) }),
  ),
  /** the name of the HR sync (`users sync --source NAME`) that created or adopted the User */
  syncSource: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  /** read-only; refused on create, and on PUT unless unchanged */
  firstLogin: Type.Optional(Type.Boolean()),
});

export const OAuthConsumerInput = strict({
  ...commonInput,
  name: Type.String({ minLength: 1, maxLength: 200 }),
  displayName: Type.Optional(Str()),
  callbackUrls: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 20 })),
  /** generated; read-only */
  consumerKey: Type.Optional(Str()),
  /** PEM RSA public key (>= 2048 bits): the consumer then signs with RSA-SHA1 only */
  publicKey: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384 })),
});

/** Body of POST and PUT; the type decides which schema validates the rest (User, OAuthConsumer, or free-form). */
export const ResourceInput = Type.Object(
  { resourceType: Type.Optional(Type.String({ pattern: CUSTOM_TYPE_PATTERN })) },
  { additionalProperties: true, description: "a User, an OAuthConsumer, or a resource of a custom type" },
);

export const Resource = Type.Object(
  {
    id: Type.String(),
    resourceType: Type.String(),
    meta: Type.Object({
      resourceType: Type.String(),
      created: Type.String(),
      lastModified: Type.String(),
      version: Type.String(),
      location: Type.String(),
    }),
    passwordState: Type.Optional(
      Type.Union(
        PASSWORD_STATES.map((state) => Type.Literal(state)),
        { description: "a User's, to admin and support: none, temporary (to change at the next login) or set" },
      ),
    ),
  },
  { additionalProperties: true },
);

const resourcetypes = Type.String({ maxLength: 1024, description: "comma-separated resource types" });
const filter = Type.String({ description: "SCIM filter (RFC 7644 section 3.4.2.2)" });

/** The longest free text a search of Users takes: a user name's or an e-mail's length. */
export const SEARCH_TEXT_MAX = 256;

/** Free text over Users (`resourcetypes=User` alone), best matches first: docs/design-decisions.md. */
export const SearchText = Type.String({
  maxLength: SEARCH_TEXT_MAX,
  description:
    "free text over the user name, given, family and display names, e-mails and externalId, ignoring case and accents (muller finds Müller); best matches first (an exact user name, then values that start with it, then values that contain it); of Users alone",
});

/** The query of the list. SCIM paging is clamped, not refused (RFC 7644 section 3.4.2.4). */
export const ResourceListQuery = Type.Object(
  {
    resourcetypes: Type.Optional(resourcetypes),
    filter: Type.Optional(filter),
    search: Type.Optional(SearchText),
    sortby: Type.Optional(Type.String({ maxLength: 256, description: "attribute path to sort by" })),
    sortorder: Type.Optional(Type.String({ description: "ascending (default) or descending" })),
    startindex: Type.Optional(QueryInteger({ description: "1-based index of the first result; below 1 means 1" })),
    count: Type.Optional(
      QueryInteger({
        description: `page size, default ${LIST_COUNT.default}; negative means 0, above ${LIST_COUNT.max} means ${LIST_COUNT.max}`,
      }),
    ),
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ resourceId: Type.String({ maxLength: 256 }) });

export const listResources = defineRoute({
  id: "resources.list",
  method: "GET",
  path: RESOURCES_PATH,
  summary: "List resources (SCIM ListResponse)",
  tags: ["resources"],
  access: { roles: EVERYONE, scope: "resources:read" },
  scim: "query",
  query: ResourceListQuery,
  responses: {
    200: Type.Object({
      schemas: Type.Array(Type.String()),
      totalResults: Type.Integer(),
      startIndex: Type.Integer(),
      itemsPerPage: Type.Integer(),
      Resources: Type.Array(Resource),
    }),
  },
});

export const getResource = defineRoute({
  id: "resources.get",
  method: "GET",
  path: `${RESOURCES_PATH}/:resourceId`,
  summary: "Read one resource",
  tags: ["resources"],
  access: { roles: EVERYONE, scope: "resources:read" },
  etag: true,
  scim: "query",
  params: IdParams,
  // the list's query, accepted and checked on a read by id too (spec 1.3): `resourcetypes` restricts
  query: ResourceListQuery,
  responses: { 200: Resource },
});

export const createResource = defineRoute({
  id: "resources.create",
  method: "POST",
  path: RESOURCES_PATH,
  summary: "Create a resource (Users by admins; a password given here is temporary)",
  tags: ["resources"],
  access: { roles: EVERYONE, scope: "resources:write" },
  errors: ["forbidden", "conflict", "weak_password", "last_admin", "service_account"],
  etag: true,
  body: ResourceInput,
  responses: { 201: Resource },
});

export const replaceResource = defineRoute({
  id: "resources.replace",
  method: "PUT",
  path: `${RESOURCES_PATH}/:resourceId`,
  summary: "Replace a resource (honours If-Match)",
  tags: ["resources"],
  access: { roles: EVERYONE, scope: "resources:write" },
  errors: ["forbidden", "conflict", "weak_password", "last_admin", "service_account"],
  etag: true,
  params: IdParams,
  body: ResourceInput,
  responses: { 200: Resource },
});

export const deleteResource = defineRoute({
  id: "resources.delete",
  method: "DELETE",
  path: `${RESOURCES_PATH}/:resourceId`,
  summary: "Delete a resource (honours If-Match)",
  tags: ["resources"],
  access: { roles: EVERYONE, scope: "resources:write" },
  errors: ["forbidden", "conflict", "last_admin"],
  etag: true,
  params: IdParams,
  responses: { 204: null },
});

export const resourceRoutes = [listResources, getResource, createResource, replaceResource, deleteResource] as const;
