import { type TSchema, Type } from "@sinclair/typebox";
import { AuditRecord } from "../contract/audit.js";
import { Event } from "../contract/events.js";
import { OAuthConsumerInput, USER_ACCOUNT_STATE, UserInput } from "../contract/resources.js";
import { CliError, EXIT } from "./errors.js";
import { pick } from "./output.js";

const ACCOUNT_STATE = Type.Object(Object.fromEntries(USER_ACCOUNT_STATE.map((name) => [name, Type.Unknown()])));

/** The contract's schemas of a record, by its SCIM `resourceType` (a Map: the type comes with the record). */
const BY_RESOURCE_TYPE = new Map<string, TSchema[]>([
  ["User", [UserInput, ACCOUNT_STATE]],
  ["OAuthConsumer", [OAuthConsumerInput]],
]);

/** The schemas of a group's records, known even when a result is empty. */
const BY_GROUP: Record<string, TSchema[]> = {
  audit: [AuditRecord],
  events: [Event],
  users: [UserInput, ACCOUNT_STATE],
};

/**
 * The `fields` query of an events call: the server selects whole fields, so a dotted path
 * (`customFields.budget`) fetches its top-level field and the CLI picks the path from it.
 */
export function fieldsToFetch(fields: string | undefined): string | undefined {
  if (fields === undefined) return undefined;
  const names = fields
    .split(",")
    .map((field) => field.trim().split(".")[0]!)
    .filter(Boolean);
  return [...new Set(names)].join(",");
}

/** The attributes a record can show: a write-only one (a password) is never printed. */
function readableProperties(schema: TSchema): [string, TSchema][] {
  return Object.entries((schema.properties as Record<string, TSchema> | undefined) ?? {}).filter(
    ([, property]) => property.writeOnly !== true,
  );
}

/**
 * Whether a dotted path names a readable attribute of the schema: through arrays (`emails.value`),
 * any branch of a union, and anything under a free-form object (`customFields.x`, `meta.*`).
 */
export function schemaKnows(schema: TSchema, parts: string[]): boolean {
  if (parts.length === 0) return true;
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as TSchema[]).some((branch) => schemaKnows(branch, parts));
  if (schema.type === "array") return schemaKnows(schema.items as TSchema, parts);
  if (schema.type === "object") {
    const property = readableProperties(schema).find(([name]) => name === parts[0])?.[1];
    if (property) return schemaKnows(property, parts.slice(1));
    if (Object.hasOwn((schema.properties as object | undefined) ?? {}, parts[0] as string)) return false;
    return schema.additionalProperties === true;
  }
  // Unknown/Any: free-form
  return schema.type === undefined;
}

function schemasOf(group: string | undefined, records: unknown[]): TSchema[] {
  const types = new Set(
    records.map((r) => (r && typeof r === "object" ? (r as { resourceType?: unknown }).resourceType : undefined)),
  );
  return [
    ...(group ? (BY_GROUP[group] ?? []) : []),
    ...[...types].flatMap((type) => (typeof type === "string" ? (BY_RESOURCE_TYPE.get(type) ?? []) : [])),
  ];
}

/**
 * `--fields` names attributes that exist, else exit 7. A field is known when the contract's
 * schema of the records says so (events, Users, OAuth consumers), or when a record printed has
 * it: free-form resources (custom types) have no schema, so their attributes are the ones the
 * records carry. A result without records and without a schema cannot tell, and is not refused.
 */
export function checkFields(fields: string[] | undefined, data: unknown, group?: string): void {
  if (!fields?.length) return;
  const records = (Array.isArray(data) ? data : [data]).filter((r) => r !== null && typeof r === "object");
  refuseUnknown(fields, schemasOf(group, records), records);
}

/**
 * The same check before a write, where the contract's schema alone can tell (events, Users,
 * OAuth consumers): a typo in --fields then exits 7 with nothing written. Custom types are
 * checked against the record printed, after the write, as they have no schema.
 */
export function checkFieldsBeforeWrite(fields: string[] | undefined, group?: string, resourceType?: unknown): void {
  if (!fields?.length) return;
  const schemas = schemasOf(group, resourceType === undefined ? [] : [{ resourceType }]);
  if (schemas.length > 0) refuseUnknown(fields, schemas, []);
}

function refuseUnknown(fields: string[], schemas: TSchema[], records: unknown[]): void {
  if (records.length === 0 && schemas.length === 0) return;
  const unknown = fields.filter(
    (field) =>
      !schemas.some((schema) => schemaKnows(schema, field.split("."))) &&
      !records.some((record) => pick(record, field) !== undefined),
  );
  if (unknown.length === 0) return;
  const known = new Set<string>();
  for (const schema of schemas) for (const [key] of readableProperties(schema)) known.add(key);
  for (const record of records) for (const key of Object.keys(record as object)) known.add(key);
  throw new CliError(
    `Unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((f) => `'${f}'`).join(", ")} in --fields.`,
    EXIT.validation,
    "unknown_field",
    `fields here: ${[...known].sort().join(", ")}`,
  );
}
