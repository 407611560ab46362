/**
 * fast-check arbitraries from the contract's TypeBox schemas (which are JSON Schema).
 *
 * No maintained bridge exists on npm (json-schema-fast-check is pinned to fast-check 1 and
 * unmaintained; json-schema-faker has its own randomness, so fast-check could neither replay nor
 * shrink what it makes). This covers the subset the contract uses: object (properties, required,
 * additionalProperties, patternProperties), string (minLength, maxLength, pattern, format
 * date-time/email), integer, number, boolean, null, array (items, maxItems), anyOf, const and the
 * empty schema. A keyword it does not know makes `validValue` throw, so a new kind of schema in the
 * contract is noticed instead of fuzzed wrongly.
 *
 * Beside values it makes the hostile kinds of text and names a request may hold wherever text or a
 * name goes: names every object inherits (`inheritedName`), text that is not well-formed Unicode
 * (`illFormedText`) and bytes that are not UTF-8 (`invalidUtf8`), each a class read from the
 * runtime or built from the encoding's rules, not a list of known cases.
 */
import fc from "fast-check";

export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  patternProperties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  maxItems?: number;
  minItems?: number;
  anyOf?: JsonSchema[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
}

/** Valid strings stay short: the long ones are the mutations' business. */
const VALID_STRING_CAP = 48;
export const ONE_MIB = 1024 * 1024;

const KNOWN_FORMATS = new Set(["date-time", "email"]);

function validString(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? VALID_STRING_CAP, Math.max(minLength, VALID_STRING_CAP));
  const fits = (s: string) => s.length >= minLength && s.length <= (schema.maxLength ?? Number.POSITIVE_INFINITY);
  if (schema.format === "date-time") {
    return fc
      .date({ min: new Date("1900-01-01T00:00:00Z"), max: new Date("2999-12-31T23:59:59Z"), noInvalidDate: true })
      .map((d) => d.toISOString());
  }
  if (schema.format === "email") return fc.emailAddress().filter(fits);
  if (schema.format !== undefined && !KNOWN_FORMATS.has(schema.format)) {
    throw new Error(`schema-arbitrary: format ${schema.format} is not supported`);
  }
  if (schema.pattern !== undefined) {
    return fc.stringMatching(new RegExp(schema.pattern, "u"), { maxLength }).filter(fits);
  }
  // printable text, and any code point (controls, NUL, astral) now and then; lone surrogates are
  // not text a client means, so they come as a mutation (illFormedText)
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ minLength, maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", minLength, maxLength }) },
  );
}

function validObject(schema: JsonSchema): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const shape: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, sub] of Object.entries(properties)) shape[name] = validValue(sub);
  const known = fc.record(shape, { requiredKeys: [...required].filter((k) => k in properties) });
  if (schema.additionalProperties === false || schema.additionalProperties === undefined) {
    if (!schema.patternProperties) return known;
  }
  // open objects (customFields, a custom resource's attributes) get a few free members too
  const freeValue = schema.patternProperties
    ? validValue(Object.values(schema.patternProperties)[0] as JsonSchema)
    : fc.jsonValue({ maxDepth: 2 });
  const free = fc.dictionary(
    fc
      .oneof(
        { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) },
        { weight: 1, arbitrary: inheritedName },
      )
      .filter((k) => !Object.hasOwn(properties, k)),
    freeValue,
    { maxKeys: 3 },
  );
  return fc.tuple(known, free).map(([a, b]) => ({ ...b, ...a }));
}

/** Values the schema accepts. */
export function validValue(schema: JsonSchema): fc.Arbitrary<unknown> {
  if ("const" in schema) return fc.constant(schema.const);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map(validValue));
  switch (schema.type) {
    case "object":
      return validObject(schema);
    case "string":
      return validString(schema);
    case "integer":
      return fc.integer({ min: schema.minimum ?? -(2 ** 31), max: schema.maximum ?? 2 ** 31 - 1 });
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.array(validValue(schema.items ?? {}), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 4, 4),
      });
    case undefined:
      if (Object.keys(schema).every((k) => k === "description" || k === "$id")) return fc.jsonValue({ maxDepth: 2 });
      throw new Error(`schema-arbitrary: no type in ${JSON.stringify(schema)}`);
    default:
      throw new Error(`schema-arbitrary: type ${schema.type} is not supported`);
  }
}

/** A value of a different JSON type than the schema's (what a client with the wrong idea sends). */
const wrongTypeValue = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 8 }),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.integer(), { maxLength: 3 }),
);

/** Values at and just past the schema's limits: the off-by-one cases. */
function boundaryValues(schema: JsonSchema): unknown[] {
  const out: unknown[] = [];
  if (schema.type === "string" || schema.pattern !== undefined) {
    if (schema.maxLength !== undefined) out.push("x".repeat(schema.maxLength), "x".repeat(schema.maxLength + 1));
    if (schema.minLength !== undefined) out.push("x".repeat(Math.max(0, schema.minLength - 1)));
    // 1 MiB of text: over the body limit once wrapped in JSON; and a little under it
    out.push("x".repeat(ONE_MIB), "\u00e9".repeat(ONE_MIB / 2 - 256), "");
  }
  if (schema.type === "array" && schema.maxItems !== undefined) {
    const item = schema.items?.type === "string" ? "a" : {};
    out.push(Array.from({ length: schema.maxItems + 1 }, () => item));
  }
  if (schema.type === "integer" || schema.type === "number") {
    out.push(-1, 0, 2 ** 53, -(2 ** 53), 1e308, 0.5);
  }
  return out;
}

/**
 * The names a plain object answers to without holding them, read from the runtime (a name a newer
 * Node adds is covered too), and `prototype`, which every function has. Code that looks a name
 * from a request up in a plain object (`table[name]`, `name in table`) finds these.
 */
export const INHERITED_NAMES: readonly string[] = [...Object.getOwnPropertyNames(Object.prototype), "prototype"];

/** One of them, now and then in another case (for names the server lower-cases: SCIM attributes). */
export const inheritedName: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...INHERITED_NAMES) },
  { weight: 1, arbitrary: fc.mixedCase(fc.constantFrom(...INHERITED_NAMES)) },
);

const surrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit));

/**
 * Text that is not well-formed Unicode: one or two surrogates that make no pair (high or low
 * alone, a pair reversed), at the start, the end or inside ordinary text. JSON.stringify writes
 * each as a `\udXXX` escape, as a client does.
 */
export const illFormedText: fc.Arbitrary<string> = fc
  .tuple(fc.string({ maxLength: 6 }), fc.array(surrogate, { minLength: 1, maxLength: 2 }), fc.string({ maxLength: 6 }))
  .map(([before, units, after]) => `${before}${units.join("")}${after}`)
  .filter((text) => !text.isWellFormed());

const continuation = fc.integer({ min: 0x80, max: 0xbf });

/**
 * Byte sequences that are not UTF-8, one of each kind the encoding rules out: a continuation byte
 * alone, a lead byte without all its continuations, an overlong form, an encoded surrogate, a code
 * point past U+10FFFF, a byte UTF-8 never uses.
 */
export const invalidUtf8: fc.Arbitrary<number[]> = fc.oneof(
  continuation.map((b) => [b]),
  fc.integer({ min: 0xc2, max: 0xf4 }).map((b) => [b]),
  fc.tuple(fc.integer({ min: 0xe1, max: 0xef }), continuation).map(([a, b]) => [a, b]),
  fc.tuple(fc.integer({ min: 0xc0, max: 0xc1 }), continuation).map(([a, b]) => [a, b]),
  fc.tuple(fc.integer({ min: 0x80, max: 0x9f }), continuation).map(([b, c]) => [0xe0, b, c]),
  fc.tuple(fc.integer({ min: 0xa0, max: 0xbf }), continuation).map(([b, c]) => [0xed, b, c]),
  fc.tuple(fc.integer({ min: 0x90, max: 0xbf }), continuation, continuation).map(([b, c, d]) => [0xf4, b, c, d]),
  fc.integer({ min: 0xf5, max: 0xff }).map((b) => [b]),
);

/** The bytes as a URL carries them: `%ED%A0%80`. */
export const percentEscaped = (bytes: number[]) =>
  bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");

/** Member names that trip prototype pollution and naive `obj[key]` code, and the empty one. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: inheritedName },
  { weight: 1, arbitrary: fc.constant("") },
  { weight: 1, arbitrary: illFormedText },
);

type Mutation = "wrongType" | "dropRequired" | "extraField" | "boundary" | "hostileKey" | "illFormedText";

/** What a mutation puts in: a value of another type, a member name, a text. */
interface Payload {
  value: unknown;
  key: string;
  text: string;
}

interface Node {
  schema: JsonSchema;
  /** the container and key the node lives at; undefined for the root */
  parent?: Record<string, unknown> | unknown[];
  key?: string | number;
}

/** Every (sub)value of `value` beside the schema branch that describes it. */
function nodesOf(schema: JsonSchema, value: unknown, parent?: Node["parent"], key?: Node["key"]): Node[] {
  const here: Node = { schema, parent, key };
  const branch =
    schema.anyOf?.find((s) => s.type === (value === null ? "null" : Array.isArray(value) ? "array" : typeof value)) ??
    schema;
  if (branch.type === "object" && value && typeof value === "object" && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    const children = Object.entries(branch.properties ?? {}).flatMap(([name, sub]) =>
      name in record ? nodesOf(sub, record[name], record, name) : [],
    );
    return [{ ...here, schema: branch }, ...children];
  }
  if (branch.type === "array" && Array.isArray(value)) {
    return [{ ...here, schema: branch }, ...value.flatMap((v, i) => nodesOf(branch.items ?? {}, v, value, i))];
  }
  return [{ ...here, schema: branch }];
}

/** Where a text is in `root` (every string, at any depth) and every object under it. */
export function placesOf(root: unknown) {
  const texts: { parent: Record<string, unknown>; key: string }[] = [];
  const objects: Record<string, unknown>[] = [];
  const walk = (node: unknown) => {
    if (!node || typeof node !== "object") return;
    if (!Array.isArray(node) && node !== root) objects.push(node as Record<string, unknown>);
    for (const [key, item] of Object.entries(node)) {
      if (typeof item === "string") texts.push({ parent: node as Record<string, unknown>, key });
      else walk(item);
    }
  };
  walk(root);
  return { texts, objects };
}

/** Sets an own property, `__proto__` included (a plain assignment would set the prototype). */
function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
}

function mutate(value: unknown, schema: JsonSchema, mutation: Mutation, pick: number, payload: Payload): unknown {
  const root = { value };
  const nodes = nodesOf(schema, value, root as unknown as Record<string, unknown>, "value");
  const objects = nodes.filter((n) => n.schema.type === "object" && n.parent);
  const target = (list: Node[]) => list[pick % list.length];
  switch (mutation) {
    case "wrongType": {
      const node = target(nodes)!;
      (node.parent as Record<string | number, unknown>)[node.key as string] = payload.value;
      break;
    }
    case "dropRequired": {
      const withRequired = objects.filter((n) => (n.schema.required ?? []).length > 0);
      const node = target(withRequired.length > 0 ? withRequired : objects);
      const object = node && (node.parent as Record<string, unknown>)[node.key as string];
      const name = node?.schema.required?.[pick % (node.schema.required.length || 1)];
      if (object && typeof object === "object" && name) delete (object as Record<string, unknown>)[name];
      break;
    }
    case "extraField":
    case "hostileKey": {
      const node = target(objects);
      const object = node && (node.parent as Record<string, unknown>)[node.key as string];
      if (object && typeof object === "object" && !Array.isArray(object)) {
        const name = mutation === "hostileKey" ? payload.key : `extra${pick % 7}`;
        defineOwn(object as Record<string, unknown>, name, payload.value);
      }
      break;
    }
    case "illFormedText": {
      // any text of the value, free-form members included, or a new member's name
      const { texts, objects: all } = placesOf(root);
      const text = texts[pick % (texts.length || 1)];
      if (pick % 2 === 0 && text) text.parent[text.key] = payload.text;
      else if (all.length > 0) defineOwn(all[pick % all.length]!, payload.text, payload.value);
      break;
    }
    case "boundary": {
      const candidates = nodes
        .map((n) => ({ n, values: boundaryValues(n.schema) }))
        .filter((c) => c.values.length > 0 && c.n.parent);
      const chosen = candidates[pick % (candidates.length || 1)];
      if (chosen) {
        (chosen.n.parent as Record<string | number, unknown>)[chosen.n.key as string] =
          chosen.values[Math.floor(pick / 7) % chosen.values.length];
      }
      break;
    }
  }
  return root.value;
}

/**
 * Values just outside the schema: wrong types, missing and extra fields, limits, hostile member
 * names, text that is not well-formed Unicode.
 */
export function mutatedValue(schema: JsonSchema): fc.Arbitrary<unknown> {
  return fc
    .tuple(
      validValue(schema),
      fc.constantFrom<Mutation>("wrongType", "dropRequired", "extraField", "boundary", "hostileKey", "illFormedText"),
      fc.nat(),
      fc.record({ value: wrongTypeValue, key: hostileKey, text: illFormedText }),
    )
    .map(([value, mutation, pick, payload]) => mutate(structuredClone(value), schema, mutation, pick, payload));
}
