import type { TSchema } from "@sinclair/typebox";
import { OAuthConsumerInput, PASSWORD_STATES, SCHEMA_URN, UserInput } from "../../contract/resources.js";
import { ACCOUNT_ATTRIBUTES, ENTERPRISE_ATTRIBUTES, SCIM_URN } from "../../contract/scim.js";
import type { ScimAttribute } from "./scim-attribute.js";
import { groupSchemaDefinitions, USER_GROUPS_ATTRIBUTE } from "./scim-group-schemas.js";

// The schemas /Schemas describes (RFC 7643 section 7), derived from the contract's schemas that
// validate the resources: an attribute the contract accepts is described, and nothing else.

export type { ScimAttribute };

/** What the contract's schema does not say of an attribute; keyed by its dotted name. */
type Note = Partial<Omit<ScimAttribute, "name" | "multiValued" | "subAttributes">>;

const NOTES: Record<string, Note> = {
  userName: {
    description: "Unique identifier for the User, the name it logs in with; unique case-insensitively.",
    uniqueness: "server",
  },
  name: { description: "The components of the User's real name." },
  displayName: { description: "The name of the User, suitable for display to end-users." },
  nickName: { description: "The casual way to address the User." },
  profileUrl: { description: "A fully qualified URL pointing to a page representing the User's online profile." },
  title: { description: "The User's title, such as 'Vice President'." },
  userType: { description: "The relationship between the organization and the User, e.g. 'Employee'." },
  preferredLanguage: { description: "The User's preferred written or spoken language (RFC 7231 Accept-Language)." },
  locale: { description: "The User's default location for localizing items, e.g. 'en-US'." },
  timezone: { description: "The User's time zone in the IANA Time Zone database format, e.g. 'America/Los_Angeles'." },
  active: { description: "Whether the User may log in; false disables the account and ends its sessions." },
  password: {
    description: "Sets a temporary password: the User must change it at the next login. Never returned.",
    mutability: "writeOnly",
    returned: "never",
  },
  emails: { description: "E-mail addresses of the User; a reset or invitation link goes to the primary one." },
  phoneNumbers: { description: "Phone numbers of the User." },
  ims: { description: "Instant messaging addresses of the User." },
  photos: { description: "URLs of photos of the User." },
  "photos.value": { type: "reference", referenceTypes: ["external"] },
  addresses: { description: "Physical mailing addresses of the User." },
  entitlements: { description: "Entitlements of the User." },
  roles: {
    description: "The User's bizctl roles: admin, support and member. Only an admin changes them.",
  },
  "roles.value": { description: "The role." },
  x509Certificates: { description: "X.509 certificates issued to the User." },
  "x509Certificates.value": { type: "binary", caseExact: true },
  employeeNumber: { description: "Numeric or alphanumeric identifier assigned to the User by the organization." },
  costCenter: { description: "Identifies the name of a cost center." },
  organization: { description: "Identifies the name of an organization." },
  division: { description: "Identifies the name of a division." },
  department: { description: "Identifies the name of a department." },
  manager: { description: "The User's manager: another User, by its id." },
  "manager.value": { description: "The id of the manager's User." },
  "manager.$ref": { type: "reference", referenceTypes: ["User"] },
  "manager.displayName": { description: "The displayName of the manager.", mutability: "readWrite" },
  syncSource: {
    description:
      "The name of the HR sync (bizctl users sync --source NAME) that created or adopted the User; a sync deactivates only the Users of its own source. None for a User made by hand.",
  },
  firstLogin: {
    description: "Whether the User's password is temporary (set by an admin or support): it must change it first.",
    mutability: "readOnly",
  },
  passwordState: {
    type: "string",
    description:
      "Where the User's password stands: none (it cannot log in until a link or a temporary password gives it one), temporary (to be changed at the next login) or set (its own).",
    canonicalValues: [...PASSWORD_STATES],
    mutability: "readOnly",
  },
  locked: { description: "Whether failed logins have locked the account for now.", mutability: "readOnly" },
  lockedUntil: { type: "dateTime", description: "When the lock ends.", mutability: "readOnly" },
  failedLogins: { description: "Failed logins since the last successful one.", mutability: "readOnly" },
  lastLogin: { type: "dateTime", description: "The last successful login.", mutability: "readOnly" },
  passwordChangedAt: { type: "dateTime", description: "When the password last changed.", mutability: "readOnly" },
  openSessions: { description: "Login sessions open now.", mutability: "readOnly" },
  invited: { description: "Whether an invitation link is pending.", mutability: "readOnly" },
  mfaEnabled: { description: "Whether the User has an active second factor (TOTP).", mutability: "readOnly" },
  serviceAccount: {
    description:
      "Whether the User is a service account (not a person: no password, no second factor, no login; it acts through API tokens an admin creates for it). Set only by POST /ServiceAccounts.",
    mutability: "readOnly",
  },
  passwordHash: {
    description:
      "On create only, at the top level of the User: a bcrypt or argon2id hash imported from another system. Never returned.",
    mutability: "writeOnly",
    returned: "never",
  },
  // OAuthConsumer
  "consumer.name": { description: "The name of the application, shown to the user who approves it." },
  "consumer.displayName": { description: "A name for display." },
  "consumer.callbackUrls": { description: "The callback URLs the consumer may use.", type: "reference" },
  "consumer.consumerKey": { description: "The consumer key, generated by the server.", mutability: "readOnly" },
  "consumer.publicKey": { description: "A PEM RSA public key: the consumer then signs with RSA-SHA1 only." },
};

/** Sub-attributes shared by the multi-valued attributes (RFC 7643 section 2.4). */
const MULTI_VALUED_NOTES: Record<string, string> = {
  value: "The attribute's significant value.",
  display: "A human-readable name, primarily used for display purposes.",
  type: "A label indicating the attribute's function, e.g. 'work' or 'home'.",
  primary: "Whether this is the primary value of the attribute; true at most once.",
};

const ENVELOPE = new Set(["resourceType", "schemas", "externalId", "id", "meta"]);

function scimType(schema: TSchema): { type: string; canonicalValues?: string[] } {
  const branches = schema.anyOf as TSchema[] | undefined;
  if (branches?.every((branch) => "const" in branch)) {
    return { type: "string", canonicalValues: branches.map((branch) => String(branch.const)) };
  }
  switch (schema.type) {
    case "boolean":
      return { type: "boolean" };
    case "integer":
      return { type: "integer" };
    case "number":
      return { type: "decimal" };
    case "object":
      return { type: "complex" };
    default:
      return { type: "string" };
  }
}

function describe(name: string, schema: TSchema, required: boolean, path: string, parent?: string): ScimAttribute {
  const multiValued = schema.type === "array";
  const item = (multiValued ? schema.items : schema) as TSchema;
  const note = NOTES[path] ?? {};
  const subAttributes =
    item.type === "object"
      ? Object.entries(item.properties as Record<string, TSchema>).map(([sub, subSchema]) =>
          describe(
            sub,
            subSchema,
            ((item.required as string[] | undefined) ?? []).includes(sub),
            `${path}.${sub}`,
            multiValued ? name : undefined,
          ),
        )
      : undefined;
  const writeOnly = schema.writeOnly === true;
  return {
    name,
    ...scimType(item),
    multiValued,
    description: note.description ?? (parent !== undefined ? MULTI_VALUED_NOTES[name] : undefined) ?? `${name}.`,
    required,
    caseExact: note.caseExact ?? false,
    mutability: note.mutability ?? (writeOnly ? "writeOnly" : "readWrite"),
    returned: note.returned ?? (writeOnly ? "never" : "default"),
    uniqueness: note.uniqueness ?? "none",
    ...(note.type && { type: note.type }),
    ...(note.referenceTypes && { referenceTypes: note.referenceTypes }),
    ...(subAttributes && { subAttributes }),
  };
}

function attributesOf(schema: TSchema, names: (name: string) => boolean, prefix = ""): ScimAttribute[] {
  const required = (schema.required as string[] | undefined) ?? [];
  return Object.entries(schema.properties as Record<string, TSchema>)
    .filter(([name]) => !ENVELOPE.has(name) && names(name))
    .map(([name, property]) => describe(name, property, required.includes(name), `${prefix}${name}`));
}

const enterprise = new Set<string>(ENTERPRISE_ATTRIBUTES);
const account = new Set<string>([...ACCOUNT_ATTRIBUTES, "passwordHash"]);

/** The account state is not in UserInput (it is never written): described from the notes. */
function accountAttributes(): ScimAttribute[] {
  const inInput = attributesOf(UserInput, (name) => account.has(name));
  const state = ACCOUNT_ATTRIBUTES.filter((name) => !inInput.some((attribute) => attribute.name === name)).map(
    (name): ScimAttribute => ({
      name,
      type: NOTES[name]?.type ?? (name === "failedLogins" || name === "openSessions" ? "integer" : "boolean"),
      multiValued: false,
      description: NOTES[name]?.description ?? `${name}.`,
      required: false,
      caseExact: false,
      mutability: "readOnly",
      returned: "default",
      uniqueness: "none",
      ...(NOTES[name]?.canonicalValues && { canonicalValues: NOTES[name].canonicalValues }),
    }),
  );
  return [...inInput, ...state];
}

export interface SchemaDefinition {
  id: string;
  name: string;
  description: string;
  attributes: ScimAttribute[];
}

/** Every schema the service's resources use, in the order /Schemas lists them. */
export function schemaDefinitions(): SchemaDefinition[] {
  return [
    {
      id: SCHEMA_URN.user,
      name: "User",
      description: "User Account",
      attributes: [
        ...attributesOf(UserInput, (name) => !enterprise.has(name) && !account.has(name)),
        USER_GROUPS_ATTRIBUTE,
      ],
    },
    {
      id: SCHEMA_URN.enterpriseUser,
      name: "EnterpriseUser",
      description: "Enterprise User",
      attributes: attributesOf(UserInput, (name) => enterprise.has(name)),
    },
    {
      id: SCIM_URN.account,
      name: "Account",
      description: "bizctl's account state of a User, shown to admin and support; read-only",
      attributes: accountAttributes(),
    },
    ...groupSchemaDefinitions(),
    {
      id: SCHEMA_URN.oauthConsumer,
      name: "OAuthConsumer",
      description:
        "An OAuth 1.0a consumer (an application) of the service; its consumerSecret is answered once, by the create",
      attributes: attributesOf(OAuthConsumerInput, () => true, "consumer."),
    },
  ];
}
