import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import {
  CUSTOM_ATTRIBUTES_MAX_BYTES,
  CUSTOM_TYPE_PATTERN,
  notATypeName,
  OAuthConsumerInput,
  SCHEMA_URN,
  USER_ACCOUNT_STATE,
  UserInput,
} from "../../contract/resources.js";
import { assertPublicKey } from "../oauth1/rsa.js";
import { invalid, ProblemError } from "../problem-error.js";
import type { ResourceRow } from "../store/resources-repo.js";
import { isImportableHash } from "./passwords.js";
import { assertEmails, assertUserName } from "./user-fields.js";

// What a resource body sent to POST or PUT /Resources may hold, and the attributes kept of it.

export type Attributes = Record<string, unknown>;

const userChecker = TypeCompiler.Compile(UserInput);
const consumerChecker = TypeCompiler.Compile(OAuthConsumerInput);
const TYPE_NAME = new RegExp(CUSTOM_TYPE_PATTERN);

export const scimInvalid = (detail: string, path = "/", scimType = "invalidValue") => invalid(detail, path, scimType);

/** TypeBox says "Expected union value" for a choice of literals (a role): name the choices instead. */
function unionMessage(schema: TSchema): string | undefined {
  const branches = schema.anyOf as TSchema[] | undefined;
  if (!branches?.every((branch) => "const" in branch)) return undefined;
  return `must be one of ${branches.map((branch) => JSON.stringify(branch.const)).join(", ")}`;
}

function validate(checker: ReturnType<typeof TypeCompiler.Compile<TSchema>>, body: unknown, type: string): void {
  if (checker.Check(body)) return;
  const errors = [...checker.Errors(body)].slice(0, 10).map((e) => ({
    path: e.path || "/",
    message: unionMessage(e.schema) ?? e.message,
  }));
  const detail = `The ${type} is not valid: ${errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`;
  throw new ProblemError("validation_failed", detail, { errors, scimType: "invalidValue" });
}

/** The resource type a body declares: its resourceType, or the User schema among its schemas. */
export function typeOf(body: Attributes): string {
  const declared = body.resourceType;
  if (typeof declared === "string") {
    if (!TYPE_NAME.test(declared)) throw scimInvalid(notATypeName(declared), "/resourceType");
    return declared;
  }
  const schemas = Array.isArray(body.schemas) ? body.schemas : [];
  if (schemas.includes(SCHEMA_URN.user)) return "User";
  throw scimInvalid("resourceType is required (User, OAuthConsumer, or a custom type name).", "/resourceType");
}

/** A User's account state: read-only, shown to admin and support, filterable (`locked eq true`). */
const ACCOUNT_STATE: readonly string[] = USER_ACCOUNT_STATE;

/** What a client sends beside the attributes: the type, schemas, and the read-only members. */
const ENVELOPE = [
  "resourceType",
  "schemas",
  "id",
  "meta",
  "password",
  "passwordHash",
  "firstLogin",
  "consumerSecret",
  ...ACCOUNT_STATE,
];

const withoutAccountState = (body: Attributes): Attributes =>
  Object.fromEntries(Object.entries(body).filter(([key]) => !ACCOUNT_STATE.includes(key)));

function attributesOf(body: Attributes): Attributes {
  return Object.fromEntries(Object.entries(body).filter(([key]) => !ENVELOPE.includes(key)));
}

/** Checks a body of `type` (a create without `current`, a replacement of it with), and returns its attributes. */
export function checkBody(type: string, body: Attributes, current?: ResourceRow): Attributes {
  if (type === "User") {
    if (typeof body.userName === "string") assertUserName(body.userName);
    assertEmails(body.emails);
    // the account state a GET showed is ignored on PUT, as meta is, and refused on create (below)
    validate(userChecker, withoutAccountState(body), "User");
  } else if (type === "OAuthConsumer") {
    validate(consumerChecker, body, "OAuthConsumer");
    assertPublicKey(body.publicKey);
  } else {
    const size = Buffer.byteLength(JSON.stringify(attributesOf(body)));
    if (size > CUSTOM_ATTRIBUTES_MAX_BYTES) {
      throw scimInvalid(
        `A resource may hold at most ${CUSTOM_ATTRIBUTES_MAX_BYTES} bytes of attributes (this has ${size}).`,
      );
    }
  }
  if (!current) {
    for (const readOnly of ["id", "meta", "firstLogin", ...ACCOUNT_STATE]) {
      if (body[readOnly] !== undefined)
        throw scimInvalid(`'${readOnly}' is assigned by the server.`, `/${readOnly}`, "mutability");
    }
  } else {
    if (body.id !== undefined && body.id !== current.id) throw scimInvalid("'id' cannot change.", "/id", "mutability");
    if (body.resourceType !== undefined && body.resourceType !== current.resource_type) {
      throw scimInvalid("'resourceType' cannot change.", "/resourceType", "mutability");
    }
  }
  const attributes = attributesOf(body);
  // stored in NFC, the form user names are compared in (user_name_key, filters)
  if (type === "User" && typeof attributes.userName === "string")
    attributes.userName = attributes.userName.normalize("NFC");
  return attributes;
}

/** A User's attributes with what a body may leave out: active, and the member role. */
export function defaultUserAttributes(attributes: Attributes): Attributes {
  return { active: true, roles: [{ value: "member", primary: true }], ...attributes };
}

/** A hash imported from another system: one we can verify, never a password in clear, never beside one. */
export function assertImportedHash(body: Attributes): void {
  if (body.passwordHash === undefined) return;
  if (body.password !== undefined) {
    throw scimInvalid("Give either password or passwordHash, not both.", "/passwordHash");
  }
  if (!isImportableHash(String(body.passwordHash))) {
    throw scimInvalid(
      "passwordHash must be a bcrypt hash ($2a$, $2b$ or $2y$, modular crypt format) or an argon2id hash (PHC string); a password in clear is never accepted.",
      "/passwordHash",
    );
  }
}
