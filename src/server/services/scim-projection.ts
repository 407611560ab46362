import { SCHEMA_URN } from "../../contract/resources.js";

// `attributes` and `excludedAttributes` (RFC 7644 section 3.4.2.5): which attributes of a SCIM
// resource an answer holds. `id` and `schemas` are always returned; names are case-insensitive.

type Attributes = Record<string, unknown>;

const ALWAYS = new Set(["id", "schemas"]);

const isObject = (value: unknown): value is Attributes =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The member of `value` named `name` in any case. */
const keyOf = (value: Attributes, name: string) => Object.keys(value).find((key) => key.toLowerCase() === name);

/**
 * A path of the list as members to walk: `name.givenName` is ["name", "givenname"]; an extension's
 * attribute (`urn:…:enterprise:2.0:User:department`) is under the extension's URN; the core
 * schema's URN prefix is dropped. Lower case, compared in any case.
 */
function membersOf(path: string, resource: Attributes): string[] {
  const lower = path.trim().toLowerCase();
  const urns = Object.keys(resource).filter((key) => key.startsWith("urn:"));
  for (const urn of [...urns, SCHEMA_URN.user].map((u) => u.toLowerCase())) {
    if (lower === urn) return [urn];
    if (lower.startsWith(`${urn}:`)) {
      const rest = lower.slice(urn.length + 1).split(".");
      return urn === SCHEMA_URN.user.toLowerCase() ? rest : [urn, ...rest];
    }
  }
  return lower.split(".");
}

function pick(value: unknown, members: string[]): unknown {
  if (members.length === 0) return value;
  if (Array.isArray(value)) {
    // each element keeps its place, so that two picks of one array (`emails.value`, `emails.type`) merge
    const picked = value.map((item) => pick(item, members));
    return picked.some((item) => item !== undefined) ? picked.map((item) => item ?? {}) : undefined;
  }
  if (!isObject(value)) return undefined;
  const key = keyOf(value, members[0] as string);
  if (key === undefined) return undefined;
  const inner = pick(value[key], members.slice(1));
  return inner === undefined ? undefined : { [key]: inner };
}

/** Merges what two picks kept of one resource. */
function merge(a: unknown, b: unknown): unknown {
  if (isObject(a) && isObject(b)) {
    const out: Attributes = { ...a };
    for (const [key, value] of Object.entries(b)) out[key] = key in out ? merge(out[key], value) : value;
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.map((item, i) => merge(item, b[i]));
  return b;
}

function drop(value: unknown, members: string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => drop(item, members));
  if (!isObject(value) || members.length === 0) return value;
  const key = keyOf(value, members[0] as string);
  if (key === undefined) return value;
  if (members.length === 1) {
    const { [key]: _dropped, ...rest } = value;
    return rest;
  }
  return { ...value, [key]: drop(value[key], members.slice(1)) };
}

const listOf = (text: string | undefined) =>
  (text ?? "")
    .split(",")
    .map((path) => path.trim())
    .filter(Boolean);

/** `schemas` naming the resource's schema and the extensions still present in `part`. */
function schemasOf(resource: Attributes, part: Attributes): unknown {
  if (!Array.isArray(resource.schemas)) return resource.schemas;
  return resource.schemas.filter((urn, index) => index === 0 || Object.hasOwn(part, String(urn)));
}

/** The resource as the request asks for it: only `attributes` (beside id and schemas), or without `excluded`. */
export function project(resource: Attributes, attributes?: string, excluded?: string): Attributes {
  const wanted = listOf(attributes);
  if (wanted.length > 0) {
    let kept: Attributes = { schemas: resource.schemas, id: resource.id };
    for (const path of wanted) kept = merge(kept, pick(resource, membersOf(path, resource)) ?? {}) as Attributes;
    return { ...kept, schemas: schemasOf(resource, kept) };
  }
  const excludedPaths = listOf(excluded);
  if (excludedPaths.length === 0) return resource;
  let left: Attributes = resource;
  for (const path of excludedPaths) {
    const members = membersOf(path, resource);
    if (!(members.length === 1 && ALWAYS.has(members[0] as string))) left = drop(left, members) as Attributes;
  }
  return { ...left, schemas: schemasOf(resource, left) };
}
