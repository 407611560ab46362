import type { TSchema } from "@sinclair/typebox";
import { OAuthConsumerInput, SCHEMA_URN, UserInput } from "../../contract/resources.js";
import { SCIM_URN } from "../../contract/scim.js";

// SCIM attribute names as the contract's schemas write them. SCIM reads attribute names in any
// case (RFC 7643 section 2.1): `nickname` is `nickName`, `EMAILS` is `emails`.

/** The schema of a resource type's attributes; none for a custom type, whose attributes are free-form. */
export function attributeSchema(type: string): TSchema | undefined {
  if (type === "User") return UserInput;
  if (type === "OAuthConsumer") return OAuthConsumerInput;
  return undefined;
}

/** The URNs whose attributes a resource of `type` keeps at its top level. */
export function schemaUrns(type: string): string[] {
  if (type === "User") return [SCHEMA_URN.user, SCHEMA_URN.enterpriseUser];
  if (type === "OAuthConsumer") return [SCHEMA_URN.oauthConsumer];
  return [SCHEMA_URN.custom(type)];
}

/** The read-only URN of the account state: a write under it is refused (mutability). */
export const ACCOUNT_URN = SCIM_URN.account;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The property of an object schema named `name` in any case: its name as the schema writes it, and its schema. */
export function propertyOf(schema: TSchema | undefined, name: string): { name: string; schema: TSchema } | undefined {
  const properties = schema?.properties as Record<string, TSchema> | undefined;
  if (!properties) return undefined;
  if (Object.hasOwn(properties, name)) return { name, schema: properties[name] as TSchema };
  const lower = name.toLowerCase();
  const found = Object.keys(properties).find((key) => key.toLowerCase() === lower);
  return found === undefined ? undefined : { name: found, schema: properties[found] as TSchema };
}

/** The schema of one element of an array schema, or the schema itself. */
export const elementOf = (schema: TSchema | undefined): TSchema | undefined =>
  schema?.type === "array" ? (schema.items as TSchema) : schema;

/**
 * `value` with its member names as `schema` writes them, through objects and arrays; a name the
 * schema does not know is kept as sent (validation refuses it where the schema is strict).
 */
export function canonicalNames(value: unknown, schema: TSchema | undefined): unknown {
  if (!schema) return value;
  if (Array.isArray(value)) return value.map((item) => canonicalNames(item, elementOf(schema)));
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => {
      const property = propertyOf(schema, key);
      return property ? [property.name, canonicalNames(inner, property.schema)] : [key, inner];
    }),
  );
}

const unassigned = (value: unknown) => value === null || (Array.isArray(value) && value.length === 0);

/**
 * `value` without its unassigned members: null, or an empty array, which RFC 7643 section 2.5
 * makes equivalent to leaving the attribute out; in objects and arrays alike.
 */
export function withoutUnassigned(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((item) => item !== null).map(withoutUnassigned);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, inner]) => !unassigned(inner))
      .map(([key, inner]) => [key, withoutUnassigned(inner)]),
  );
}
