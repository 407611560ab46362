/**
 * A file's User merged into the directory's: only the attributes the file gives change, and a
 * User the file leaves as it is gets no write at all. `users import --on-conflict update` and
 * `users sync` both send what `changesOf` finds, as one PATCH under the version they read.
 */
import type { ApiClient } from "../client/client.js";
import * as resources from "../contract/resources.js";

type Attributes = Record<string, unknown>;

/** One attribute that changes: its top-level name, the directory's value and the file's merged in. */
export interface AttributeChange {
  attribute: string;
  old: unknown;
  new: unknown;
}

const isObject = (value: unknown): value is Attributes =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** JSON with the members of every object in one order: two equal values, one text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner) =>
    isObject(inner) ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : 1))) : inner,
  );
}

/** What the file says of a top-level attribute, laid over what the directory holds. */
function mergedValue(attribute: string, old: unknown, given: unknown): unknown {
  if (isObject(old) && isObject(given)) return { ...old, ...given };
  // roles are the list the file names; an element of another list (emails[0]) keeps what the file leaves out
  if (attribute !== "roles" && Array.isArray(old) && Array.isArray(given)) {
    const merged = [...old];
    given.forEach((element, index) => {
      merged[index] = isObject(merged[index]) && isObject(element) ? { ...merged[index], ...element } : element;
    });
    return merged;
  }
  return given;
}

/** Never compared nor written: on create only, or assigned by the server. */
const NOT_MERGED = new Set(["passwordHash", "password", "id", "meta", "schemas", "resourceType"]);

/** The attributes of `given` (a file's User) that differ from `current` (the directory's), each merged. */
export function changesOf(current: Attributes, given: Attributes): AttributeChange[] {
  const changes: AttributeChange[] = [];
  for (const [attribute, value] of Object.entries(given)) {
    if (NOT_MERGED.has(attribute) || value === undefined) continue;
    const old = current[attribute];
    // a userName matches in any case: another case of it is the same name
    if (attribute === "userName" && String(old).toLowerCase() === String(value).toLowerCase()) continue;
    const merged = mergedValue(attribute, old, value);
    if (canonicalJson(old) !== canonicalJson(merged)) changes.push({ attribute, old, new: merged });
  }
  return changes;
}

/** The PATCH body (RFC 7644 section 3.5.2) that makes these changes. */
export function patchOf(changes: AttributeChange[]): { schemas: string[]; Operations: unknown[] } {
  return {
    schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
    Operations: changes.map((change) => ({ op: "replace", path: change.attribute, value: change.new })),
  };
}

/** The Users of these userNames, by lower-cased userName (a userName matches in any case). */
export async function usersByName(client: ApiClient, userNames: string[]): Promise<Map<string, Attributes>> {
  const found = new Map<string, Attributes>();
  // a filter of 50 alternatives stays well under any URL limit
  for (let at = 0; at < userNames.length; at += 50) {
    const names = userNames.slice(at, at + 50);
    const filter = names.map((name) => `userName eq ${JSON.stringify(name)}`).join(" or ");
    const { data } = await client.call(resources.listResources, {
      query: { resourcetypes: "User", filter, count: names.length },
    });
    for (const user of data.Resources as Attributes[]) found.set(String(user.userName).toLowerCase(), user);
  }
  return found;
}

/** The version a User was read at (its ETag), for If-Match. */
export function versionOf(user: Attributes): string | undefined {
  return (user.meta as { version?: string } | undefined)?.version;
}
