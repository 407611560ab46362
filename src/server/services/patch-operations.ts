import type { TSchema } from "@sinclair/typebox";
import { ACCOUNT_ATTRIBUTES } from "../../contract/scim.js";
import { matches } from "../filter/evaluate.js";
import type { Filter } from "../filter/parse.js";
import { parsePatchPath } from "../filter/patch-path.js";
import { invalid, type ProblemError } from "../problem-error.js";
import { ACCOUNT_URN, elementOf, propertyOf } from "./scim-attributes.js";

// The operations of a SCIM PATCH (RFC 7644 section 3.5.2) applied to a resource's attributes, as
// the resource keeps them: add, replace and remove, with or without a path, paths with a value
// filter (`emails[type eq "work"].value`), op names in any case and boolean strings ("False") as
// Entra ID and Okta send them. Pure: the result is then written as a PUT writes a body.

type Attributes = Record<string, unknown>;

export interface PatchOperation {
  op: string;
  path?: string;
  value?: unknown;
}

/** What the operations apply to: the resource's schema and the URNs it keeps at its top level. */
export interface PatchTarget {
  /** the contract's schema of the attributes; none for a custom type (free-form) */
  schema?: TSchema;
  /** schema URNs whose attributes sit at the top level (`urn:…:User:name` is `name`) */
  urns: readonly string[];
  /** extensions as a whole (a path that is the URN alone): the attributes each holds */
  extensions: Readonly<Record<string, readonly string[]>>;
}

/** Attributes the server assigns: an operation on them is refused (mutability). */
const READ_ONLY = new Set(["id", "meta", "schemas", "resourcetype", ...ACCOUNT_ATTRIBUTES.map((n) => n.toLowerCase())]);

interface Place {
  /** the top-level attribute, named as the schema (or the resource) names it */
  name: string;
  schema?: TSchema;
  /** `name.sub` */
  sub?: string;
  /** `name[filter]`, and `name[filter].filterSub` */
  filter?: Filter;
  filterSub?: string;
}

type Target = Place | { extension: string };

const isObject = (value: unknown): value is Attributes =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** One operation's refusal, naming it: `/Operations/2/path`. */
class Refusal {
  constructor(readonly at: number) {}
  fail(detail: string, scimType: string, member = "path"): ProblemError {
    return invalid(detail, `/Operations/${this.at}${member ? `/${member}` : ""}`, scimType);
  }
}

/** The member of `object` named `name` in any case, or `name` itself when there is none. */
const memberName = (object: unknown, name: string): string =>
  (isObject(object) ? Object.keys(object).find((key) => key.toLowerCase() === name.toLowerCase()) : undefined) ?? name;

/** A value sent as Entra ID and Okta send it, as the schema types it: "False" is false, a list of one manager is the manager. */
function coerce(value: unknown, schema: TSchema | undefined): unknown {
  if (!schema || value === null || value === undefined) return value;
  if (schema.type === "boolean" && typeof value === "string" && /^(true|false)$/i.test(value)) {
    return value.toLowerCase() === "true";
  }
  if (schema.type === "array") {
    return Array.isArray(value)
      ? value.map((item) => coerce(item, schema.items as TSchema))
      : coerce(value, schema.items as TSchema);
  }
  if (schema.type === "object") {
    const one = Array.isArray(value) && value.length === 1 && isObject(value[0]) ? value[0] : value;
    if (typeof one === "string" && propertyOf(schema, "value")) return { value: one };
    if (isObject(one)) {
      return Object.fromEntries(
        Object.entries(one).map(([key, inner]) => {
          const property = propertyOf(schema, key);
          return property ? [property.name, coerce(inner, property.schema)] : [key, inner];
        }),
      );
    }
    return one;
  }
  return value;
}

const isMultiValued = (place: Place, current: unknown) =>
  place.schema ? place.schema.type === "array" : Array.isArray(current);

/** The sub-attribute `name` of the attribute's elements (or of the attribute), as the schema or the values name it. */
function subName(place: Place, name: string, current: unknown, refusal: Refusal): string {
  const element = elementOf(place.schema);
  if (element?.properties) {
    const property = propertyOf(element, name);
    if (!property) throw refusal.fail(`'${place.name}' has no sub-attribute '${name}'.`, "invalidPath");
    return property.name;
  }
  const sample = Array.isArray(current) ? current.find(isObject) : current;
  return memberName(sample, name);
}

/** Where a path points in `document`. */
function resolve(path: string, document: Attributes, target: PatchTarget, refusal: Refusal): Target {
  let parsed: ReturnType<typeof parsePatchPath>;
  try {
    parsed = parsePatchPath(path);
  } catch (error) {
    throw refusal.fail((error as ProblemError).detail, "invalidPath");
  }
  let attribute = parsed.attribute;
  const lower = attribute.toLowerCase();
  const account = ACCOUNT_URN.toLowerCase();
  if (lower === account || lower.startsWith(`${account}:`)) {
    throw refusal.fail("The account state is read-only.", "mutability");
  }
  const urn = target.urns.map((u) => u.toLowerCase()).find((u) => lower === u || lower.startsWith(`${u}:`));
  if (urn !== undefined && lower === urn) {
    if (!target.extensions[urn]) throw refusal.fail(`Name an attribute of ${parsed.attribute}.`, "invalidPath");
    return { extension: urn };
  }
  if (urn !== undefined) attribute = attribute.slice(urn.length + 1);
  else if (lower.startsWith("urn:")) throw refusal.fail(`This resource has no schema ${attribute}.`, "invalidPath");
  // an extension's URN names its own attributes only: `…enterprise:2.0:User:password` is no password
  const members = urn === undefined ? undefined : target.extensions[urn];
  const head = attribute.split(".")[0]!.toLowerCase();
  if (members && !members.some((member) => member.toLowerCase() === head)) {
    throw refusal.fail(
      `'${attribute}' is not an attribute of ${parsed.attribute.slice(0, urn!.length)}.`,
      "invalidPath",
    );
  }
  const [first = "", second] = attribute.split(".");
  if (READ_ONLY.has(first.toLowerCase())) throw refusal.fail(`'${first}' is assigned by the server.`, "mutability");
  const property = propertyOf(target.schema, first);
  if (target.schema && !property) throw refusal.fail(`'${first}' is not an attribute of this resource.`, "invalidPath");
  const name = property?.name ?? memberName(document, first);
  const place: Place = { name, ...(property && { schema: property.schema }) };
  const current = document[name];
  if (second !== undefined) place.sub = subName(place, second, current, refusal);
  if (parsed.filter) {
    if (!isMultiValued(place, current) && current !== undefined) {
      throw refusal.fail(`'${name}' is not multi-valued: a value filter selects nothing in it.`, "invalidPath");
    }
    place.filter = parsed.filter;
    if (parsed.subAttribute !== undefined) place.filterSub = subName(place, parsed.subAttribute, current, refusal);
  }
  return place;
}

/** The members a filter of equalities (`type eq "work" and primary eq true`) gives a new element; none for another filter. */
function equalities(filter: Filter, place: Place, current: unknown, refusal: Refusal): Attributes | undefined {
  if (filter.op === "eq" && filter.compValue !== null && !filter.attrPath.includes(".")) {
    return { [subName(place, filter.attrPath, current, refusal)]: filter.compValue };
  }
  if (filter.op !== "and") return undefined;
  const parts = filter.filters.map((inner) => equalities(inner, place, current, refusal));
  return parts.every(Boolean) ? Object.assign({}, ...parts) : undefined;
}

function selected(place: Place, elements: unknown[], refusal: Refusal): unknown[] {
  try {
    return elements.filter((element) => matches(place.filter as Filter, element));
  } catch (error) {
    throw refusal.fail((error as ProblemError).detail, "invalidPath");
  }
}

/** At most one value of a multi-valued attribute is primary (RFC 7644 section 3.5.2): the one just written wins. */
function onePrimary(elements: unknown[], written: unknown[]): void {
  if (!written.some((element) => isObject(element) && element.primary === true)) return;
  for (const element of elements) {
    if (!written.includes(element) && isObject(element) && element.primary === true) element.primary = false;
  }
}

function setOrDelete(object: Attributes, name: string, value: unknown): void {
  if (value === null || (Array.isArray(value) && value.length === 0)) delete object[name];
  else object[name] = value;
}

/** add and replace on a place. */
function write(document: Attributes, place: Place, value: unknown, replace: boolean, refusal: Refusal): void {
  const { name } = place;
  const current = document[name];
  const multi = isMultiValued(place, current) || (current === undefined && Array.isArray(value) && !place.schema);
  if (place.filter) {
    const elements = Array.isArray(current) ? current : [];
    const hits = selected(place, elements, refusal);
    const memberSchema = (member: string) => propertyOf(elementOf(place.schema), member)?.schema;
    if (hits.length === 0) {
      // nothing selected: a new element made of the filter's equalities, as Entra ID and Okta expect
      const made = equalities(place.filter, place, current, refusal);
      if (!made) throw refusal.fail(`No value of '${name}' matches the filter.`, "noTarget");
      const element = place.filterSub
        ? { ...made, [place.filterSub]: coerce(value, memberSchema(place.filterSub)) }
        : { ...made, ...(coerce(value, elementOf(place.schema)) as Attributes) };
      document[name] = [...elements, element];
      onePrimary(document[name] as unknown[], [element]);
      return;
    }
    for (const hit of hits) {
      if (!isObject(hit)) throw refusal.fail(`The values of '${name}' have no sub-attributes.`, "invalidPath");
      if (place.filterSub) setOrDelete(hit, place.filterSub, coerce(value, memberSchema(place.filterSub)));
      else if (!isObject(value)) throw refusal.fail(`A value of '${name}' is an object.`, "invalidValue", "value");
      else if (replace) {
        for (const key of Object.keys(hit)) delete hit[key];
        Object.assign(hit, coerce(value, elementOf(place.schema)));
      } else Object.assign(hit, coerce(value, elementOf(place.schema)));
    }
    onePrimary(elements, hits);
    return;
  }
  if (place.sub) {
    if (multi)
      throw refusal.fail(`Select the values of '${name}' with a filter: ${name}[…].${place.sub}.`, "invalidPath");
    const complex = isObject(current) ? current : {};
    setOrDelete(complex, place.sub, coerce(value, propertyOf(place.schema, place.sub)?.schema));
    setOrDelete(document, name, Object.keys(complex).length > 0 ? complex : null);
    return;
  }
  const coerced = coerce(value, place.schema);
  if (multi) {
    const values = Array.isArray(coerced) ? coerced : [coerced];
    if (replace || !Array.isArray(current)) {
      setOrDelete(document, name, values);
      onePrimary(values, values);
      return;
    }
    // add: the values not there yet (RFC 7644 section 3.5.2.1)
    const added = values.filter((item) => !current.some((existing) => sameJson(existing, item)));
    document[name] = [...current, ...added];
    onePrimary(document[name] as unknown[], added);
    return;
  }
  // a complex value's sub-attributes are merged, those not sent kept (RFC 7644 section 3.5.2.3)
  if (isObject(coerced) && isObject(current) && (place.schema?.type === "object" || !place.schema)) {
    const merged = { ...current };
    for (const [key, inner] of Object.entries(coerced)) setOrDelete(merged, key, inner);
    setOrDelete(document, name, merged);
    return;
  }
  setOrDelete(document, name, coerced);
}

function remove(document: Attributes, place: Place, value: unknown, refusal: Refusal): void {
  const { name } = place;
  const current = document[name];
  if (place.filter) {
    if (!Array.isArray(current)) return;
    const hits = selected(place, current, refusal);
    if (place.filterSub) {
      for (const hit of hits) if (isObject(hit)) delete hit[place.filterSub];
      return;
    }
    setOrDelete(
      document,
      name,
      current.filter((element) => !hits.includes(element)),
    );
    return;
  }
  if (place.sub) {
    if (Array.isArray(current)) throw refusal.fail(`Select the values of '${name}' with a filter.`, "invalidPath");
    if (isObject(current)) {
      delete current[place.sub];
      setOrDelete(document, name, Object.keys(current).length > 0 ? current : null);
    }
    return;
  }
  // the values given, as Entra ID removed group members: those equal to one of them, by `value` when they have one
  if (value !== undefined && Array.isArray(current)) {
    const given = Array.isArray(value) ? value : [value];
    const same = (element: unknown, item: unknown) =>
      isObject(element) && isObject(item) && "value" in item ? element.value === item.value : sameJson(element, item);
    setOrDelete(
      document,
      name,
      current.filter((element) => !given.some((item) => same(element, item))),
    );
    return;
  }
  delete document[name];
}

function applyOne(
  document: Attributes,
  op: "add" | "replace" | "remove",
  target: Target,
  value: unknown,
  patchTarget: PatchTarget,
  refusal: Refusal,
): void {
  if ("extension" in target) {
    const members = patchTarget.extensions[target.extension] ?? [];
    if (op === "remove") {
      for (const member of members) delete document[member];
      return;
    }
    if (!isObject(value)) throw refusal.fail("The value of an extension is an object.", "invalidValue", "value");
    for (const [key, inner] of Object.entries(value)) {
      const place = resolve(`${target.extension}:${key}`, document, patchTarget, refusal);
      applyOne(document, op, place, inner, patchTarget, refusal);
    }
    return;
  }
  if (op === "remove") remove(document, target, value, refusal);
  else write(document, target, value, op === "replace", refusal);
}

/** The attributes once every operation is applied, in order; the first refused one refuses them all. */
export function applyPatch(attributes: Attributes, operations: PatchOperation[], target: PatchTarget): Attributes {
  const document = structuredClone(attributes);
  operations.forEach((operation, index) => {
    const refusal = new Refusal(index);
    const op = operation.op.toLowerCase();
    if (op !== "add" && op !== "replace" && op !== "remove") {
      throw refusal.fail(`'${operation.op}' is not an operation: add, replace or remove.`, "invalidSyntax", "op");
    }
    const { path, value } = operation;
    if (op !== "remove" && value === undefined) {
      throw refusal.fail(`An ${op} operation needs a value.`, "invalidValue", "value");
    }
    if (path === undefined || path.trim() === "") {
      if (op === "remove") throw refusal.fail("A remove operation needs a path.", "noTarget");
      if (!isObject(value)) {
        throw refusal.fail(
          `Without a path, the value of an ${op} is an object of attributes.`,
          "invalidValue",
          "value",
        );
      }
      // each member is a path of its own: `name.givenName`, an extension's URN (Entra ID sends both)
      for (const [key, inner] of Object.entries(value)) {
        applyOne(document, op, resolve(key, document, target, refusal), inner, target, refusal);
      }
      return;
    }
    applyOne(document, op, resolve(path, document, target, refusal), value, target, refusal);
  });
  return document;
}
