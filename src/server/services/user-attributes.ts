import { attributePath, invalidFilter, literalKind, wrongKind } from "../filter/compile.js";
import type { Filter } from "../filter/parse.js";
import { invalid } from "../problem-error.js";
import { type ScimAttribute, schemaDefinitions } from "./scim-schemas.js";

// A list of Users alone knows every attribute a User can have (the User schemas are strict):
// a filter or an order naming any other, or comparing one with a value of another type, is a
// mistake to report, not a question whose answer is "no users". Among other types, whose
// attributes are any a resource was given, a name cannot be told wrong.

/** Attributes of every resource, outside the schemas (RFC 7643 section 3.1). */
const COMMON: Record<string, string> = {
  id: "string",
  externalid: "string",
  schemas: "reference",
  resourcetype: "string",
  meta: "complex",
  "meta.created": "dateTime",
  "meta.lastmodified": "dateTime",
  "meta.resourcetype": "string",
  "meta.version": "string",
  "meta.location": "reference",
};

/** Every attribute path of a User, lower-cased and dotted as a filter names it, with its SCIM type. */
function userAttributeTypes(): Map<string, ScimAttribute["type"]> {
  const types = new Map(Object.entries(COMMON));
  const add = (attribute: ScimAttribute, prefix: string) => {
    const path = `${prefix}${attribute.name.toLowerCase()}`;
    types.set(path, attribute.type);
    for (const sub of attribute.subAttributes ?? []) add(sub, `${path}.`);
  };
  for (const schema of schemaDefinitions().filter((s) => s.name !== "OAuthConsumer")) {
    for (const attribute of schema.attributes) add(attribute, "");
  }
  return types;
}

let known: Map<string, ScimAttribute["type"]> | undefined;
const userAttributes = () => {
  known ??= userAttributeTypes();
  return known;
};

/** The type a comparison with `path` compares: a complex attribute's is its `value`'s (`emails eq`). */
function comparedType(path: string): ScimAttribute["type"] | undefined {
  const type = userAttributes().get(path);
  return type === "complex" ? userAttributes().get(`${path}.value`) : type;
}

/** The kind of literal a SCIM type compares with; any other than these is text. */
const KIND: Record<string, "n" | "b"> = { boolean: "b", integer: "n", decimal: "n" };

function mustBeUserAttribute(name: string, path: string): void {
  if (!userAttributes().has(path)) throw invalidFilter(`Users cannot be filtered by '${name}'.`);
  // a User's groups are read from the groups' members, not kept with the User: no list filters on them
  if (path === "groups" || path.startsWith("groups.")) {
    throw invalidFilter(
      `Users cannot be filtered by their groups ('${name}'): list a group's members instead (GET /Groups/{id}, 'bizctl groups members GROUP').`,
    );
  }
}

/** Refuses a filter over Users that names an attribute no User has, or compares one with a value of another type. */
export function checkUserFilter(filter: Filter, scope = ""): void {
  switch (filter.op) {
    case "and":
    case "or":
      for (const part of filter.filters) checkUserFilter(part, scope);
      return;
    case "not":
      checkUserFilter(filter.filter, scope);
      return;
    case "[]": {
      const path = `${scope}${attributePath(filter.attrPath).join(".")}`;
      mustBeUserAttribute(filter.attrPath, path);
      checkUserFilter(filter.valFilter, `${path}.`);
      return;
    }
    case "pr":
      mustBeUserAttribute(filter.attrPath, `${scope}${attributePath(filter.attrPath).join(".")}`);
      return;
    default: {
      const path = `${scope}${attributePath(filter.attrPath).join(".")}`;
      mustBeUserAttribute(filter.attrPath, path);
      const type = comparedType(path);
      const literal = filter.compValue;
      if (type === undefined) {
        throw invalidFilter(`'${filter.attrPath}' has parts: compare one of them (${filter.attrPath}.…).`);
      }
      const kind = KIND[type] ?? "s";
      if (literal !== null && literalKind(literal) !== kind) throw wrongKind(filter.attrPath, kind, literal);
    }
  }
}

/** Refuses an order of Users by an attribute no User has (`sortBy=nope`), as a filter is refused. */
export function checkUserSortBy(sortBy: string): void {
  const path = attributePath(sortBy).join(".");
  if (!userAttributes().has(path)) {
    throw invalid(`Users cannot be sorted by '${sortBy}'.`, "/query/sortby", "invalidValue");
  }
}
