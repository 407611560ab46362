/**
 * Requests for one contract operation, valid and hostile, as fast-check arbitraries. Everything
 * is read from the route entry (method, path and aliases, params, query and body schemas), so an
 * operation added to the contract is fuzzed without a line here.
 *
 * A generated request is a template: a path parameter may say "the n-th identifier of the
 * database", resolved when the request is sent, so that valid requests reach real rows.
 *
 * Where the server reads names out of free text (a sort key in `order` or `sortby`, a field list,
 * a filter's attribute paths), a query value is now and then a name expression: a sort list, a
 * field list or a SCIM filter built from the contract's own names, names every object inherits
 * and made-up ones. Which parameters hold names the contract does not say, so any free-text
 * parameter may get one.
 */
import fc from "fast-check";
import * as contract from "../../src/contract/index.js";
import type { RouteEntry } from "../../src/contract/route.js";
import { CALLER_KINDS, type CallerKind } from "./fuzz-world.js";
import {
  hostileKey,
  INHERITED_NAMES,
  illFormedText,
  inheritedName,
  invalidUtf8,
  type JsonSchema,
  mutatedValue,
  ONE_MIB,
  percentEscaped,
  placesOf,
  validValue,
} from "./schema-arbitrary.js";

export type Segment = { pool: number } | { text: string } | { raw: string };

export type Body = { kind: "none" } | { kind: "json"; value: unknown } | { kind: "raw"; bytes: Buffer; what: string };

export interface FuzzRequest {
  caller: CallerKind;
  method: string;
  /** the contract path (or an alias) with `:name` segments */
  path: string;
  params: Record<string, Segment>;
  /** `key=value` pieces, already encoded (raw ones may be malformed on purpose) */
  query: string[];
  body: Body;
  headers: Record<string, string>;
  /** the caller's Authorization is replaced by this (anonymous only: odd credentials) */
  authorization?: string;
}

/** Segments that try to leave the route or trip the decoder. */
export const HOSTILE_SEGMENTS = [
  "..",
  "../..",
  "..%2F..%2Fhealth",
  "%2e%2e",
  "%2e%2e%2f",
  "%00",
  "a%00b",
  "%2F",
  "a%2Fb",
  "%5C..%5C",
  "%ZZ",
  "%",
  "%FF",
  "%C0%AE%C0%AE",
  "%ED%A0%80",
  "%E2%80%AE",
  "%20",
  "__proto__",
  "constructor",
  "*",
  ".",
  "x".repeat(300),
  "%F0%9F%92%A9".repeat(100),
];

/** Query pieces that are malformed, polluting or huge. */
const HOSTILE_QUERY = [
  "%ZZ=1",
  "a=%FF%FE",
  "a=%00",
  "%00=%00",
  "__proto__=1",
  "__proto__[admin]=1",
  "constructor[prototype][x]=1",
  "a[]=1&a[]=2",
  "=",
  "&&",
  `filter=${"(".repeat(10_000)}`,
  `filter=${encodeURIComponent(`${'name eq "a" and '.repeat(2000)}name eq "b"`)}`,
  `x=${"y".repeat(70_000)}`,
];

const DEEP = 10_000;

/** Bodies no well-behaved client sends. */
export const HOSTILE_BODIES: { what: string; bytes: Buffer }[] = [
  {
    what: "invalid UTF-8",
    bytes: Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  },
  { what: "overlong UTF-8", bytes: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xae, 0x22, 0x7d]) },
  { what: "UTF-8 surrogate", bytes: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]) },
  { what: "NUL byte", bytes: Buffer.from('{"name":"a\u0000b"}') },
  { what: "escaped NUL", bytes: Buffer.from('{"name":"a\\u0000b","userName":"\\u0000","code":"\\u0000"}') },
  { what: "__proto__", bytes: Buffer.from('{"__proto__":{"admin":true,"roles":["admin"]}}') },
  { what: "constructor", bytes: Buffer.from('{"constructor":{"prototype":{"admin":true}}}') },
  { what: "deep arrays", bytes: Buffer.from(`${"[".repeat(DEEP)}${"]".repeat(DEEP)}`) },
  { what: "deep objects", bytes: Buffer.from(`${'{"a":'.repeat(DEEP)}1${"}".repeat(DEEP)}`) },
  {
    what: "deep customFields",
    bytes: Buffer.from(
      `{"name":"n","startsAt":"2027-01-01T00:00:00Z","customFields":${'{"a":'.repeat(DEEP)}1${"}".repeat(DEEP + 1)}`,
    ),
  },
  { what: "empty", bytes: Buffer.alloc(0) },
  { what: "null", bytes: Buffer.from("null") },
  { what: "array", bytes: Buffer.from("[]") },
  { what: "string", bytes: Buffer.from('"x"') },
  { what: "huge number", bytes: Buffer.from('{"name":1e999,"startsAt":-0}') },
  { what: "truncated", bytes: Buffer.from('{"name":"a') },
  { what: "BOM", bytes: Buffer.from('\ufeff{"name":"a"}') },
  { what: "over the limit", bytes: Buffer.from(`{"name":"${"x".repeat(ONE_MIB)}"}`) },
  { what: "form", bytes: Buffer.from("userName=a&password=b&__proto__=x") },
];

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "application/scim+json",
  "APPLICATION/JSON",
  "application/json; charset=latin1",
  "application/json, text/plain",
  "application/jsonx",
  "text/plain",
  "text/html",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/octet-stream",
  "*/*",
  ";",
  "",
];

const ODD_AUTHORIZATION = [
  "Bearer",
  "Bearer ",
  "Bearer a b",
  "Bearer e30.e30.",
  "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
  `Bearer ${"a".repeat(8192)}`,
  "Basic YWRtaW46YWRtaW4=",
  "OAuth",
  "OAuth ",
  'OAuth oauth_consumer_key="%ZZ", oauth_signature="x"',
  'OAuth oauth_consumer_key="a", oauth_consumer_key="b"',
  'OAuth realm="x", oauth_signature_method="RSA-SHA1", oauth_signature="@@@"',
  "\u00ff\u00fe",
];

/**
 * Bodies of another shape that an open body schema stands for: the resources endpoint takes a
 * User or an OAuthConsumer under one loose schema, and valid requests should reach those too.
 * Optional: an operation without an entry here is fuzzed from its own body schema alone.
 */
const BODY_VARIANTS = new Map<unknown, { schema: JsonSchema; fixed: Record<string, unknown> }[]>([
  [
    contract.resources.ResourceInput,
    [
      { schema: contract.resources.UserInput as JsonSchema, fixed: { resourceType: "User" } },
      { schema: contract.resources.OAuthConsumerInput as JsonSchema, fixed: { resourceType: "OAuthConsumer" } },
    ],
  ],
]);

/** The value with one of its texts (or, on an object, a new member's name) replaced by `marker`. */
function marked(value: unknown, pick: number, marker: string): unknown {
  const root = { value };
  const { texts, objects } = placesOf(root);
  const text = texts[pick % (texts.length || 1)];
  if (pick % 2 === 0 && text) text.parent[text.key] = marker;
  else if (objects.length > 0) {
    const object = objects[pick % objects.length]!;
    Object.defineProperty(object, marker, { value: 1, enumerable: true, configurable: true, writable: true });
  } else if (text) text.parent[text.key] = marker;
  else return marker;
  return root.value;
}

/**
 * A valid body with bytes that are not UTF-8 in one of its texts or member names, as raw JSON
 * text: what a client with a broken encoder sends.
 */
function withInvalidUtf8(value: unknown, pick: number, bytes: number[]): Body {
  const marker = "\u0001invalid\u0001";
  const text = JSON.stringify(marked(structuredClone(value), pick, marker)) ?? "null";
  const parts = text.split(JSON.stringify(marker).slice(1, -1));
  const joined = parts.flatMap((part, i) => (i === 0 ? [Buffer.from(part)] : [Buffer.from(bytes), Buffer.from(part)]));
  return { kind: "raw", bytes: Buffer.concat(joined), what: `bytes ${percentEscaped(bytes)} that are not UTF-8` };
}

function withFixed(arbitrary: fc.Arbitrary<unknown>, fixed: Record<string, unknown>): fc.Arbitrary<unknown> {
  return arbitrary.map((v) => (v && typeof v === "object" && !Array.isArray(v) ? { ...v, ...fixed } : v));
}

function bodyArbitrary(route: RouteEntry): fc.Arbitrary<Body> {
  const hostile = fc.constantFrom(...HOSTILE_BODIES).map((b): Body => ({ kind: "raw", ...b }));
  const spliced = fc
    .tuple(route.body ? validValue(route.body as JsonSchema) : fc.constant({}), hostileKey)
    .map(([value, key]): Body => {
      // a valid body with a hostile key spliced in as JSON text (JSON.stringify would drop __proto__)
      const text = JSON.stringify(value);
      const bytes = Buffer.from(
        text.startsWith("{")
          ? `{${JSON.stringify(key)}:{"polluted":true}${text === "{}" ? "" : ","}${text.slice(1)}`
          : text,
      );
      return { kind: "raw", bytes, what: `key ${key}` };
    });
  if (!route.body) {
    return fc.oneof(
      { weight: 6, arbitrary: fc.constant<Body>({ kind: "none" }) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value): Body => ({ kind: "json", value })) },
      { weight: 1, arbitrary: hostile },
    );
  }
  const schema = route.body as JsonSchema;
  const variants = BODY_VARIANTS.get(route.body) ?? [];
  const valid = fc.oneof(validValue(schema), ...variants.map((v) => withFixed(validValue(v.schema), v.fixed)));
  const mutated = fc.oneof(mutatedValue(schema), ...variants.map((v) => withFixed(mutatedValue(v.schema), v.fixed)));
  const notUtf8 = fc
    .tuple(valid, fc.nat(), invalidUtf8)
    .map(([value, pick, bytes]) => withInvalidUtf8(value, pick, bytes));
  return fc.oneof(
    { weight: 3, arbitrary: valid.map((value): Body => ({ kind: "json", value })) },
    { weight: 3, arbitrary: mutated.map((value): Body => ({ kind: "json", value })) },
    { weight: 1, arbitrary: spliced },
    { weight: 1, arbitrary: notUtf8 },
    { weight: 2, arbitrary: hostile },
    { weight: 1, arbitrary: fc.constant<Body>({ kind: "none" }) },
  );
}

function segmentArbitrary(schema: JsonSchema | undefined): fc.Arbitrary<Segment> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.nat().map((pool): Segment => ({ pool })) },
    { weight: 2, arbitrary: (schema ? validValue(schema) : fc.string()).map((v): Segment => ({ text: String(v) })) },
    { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS).map((raw): Segment => ({ raw })) },
    { weight: 1, arbitrary: inheritedName.map((text): Segment => ({ text })) },
    { weight: 1, arbitrary: invalidUtf8.map((bytes): Segment => ({ raw: percentEscaped(bytes) })) },
  );
}

/** Every member name the contract's schemas know, of requests and answers alike. */
function namesIn(schema: JsonSchema | undefined): string[] {
  if (!schema) return [];
  return [
    ...Object.entries(schema.properties ?? {}).flatMap(([name, sub]) => [name, ...namesIn(sub)]),
    ...namesIn(schema.items),
    ...(schema.anyOf ?? []).flatMap(namesIn),
  ];
}

const CONTRACT_NAMES = [
  ...new Set(
    contract.allRoutes.flatMap((route) =>
      [route.params, route.query, route.body, ...Object.values(route.responses)].flatMap((schema) =>
        namesIn(schema as JsonSchema | undefined),
      ),
    ),
  ),
].sort();

/** A name where the server expects a field or an attribute: the contract's, an inherited one, or a made-up one. */
const attributeName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...CONTRACT_NAMES) },
  { weight: 3, arbitrary: inheritedName },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z_$][\w$]{0,11}$/) },
);

/** An attribute path, mostly one name, now and then dotted or behind a schema URN as SCIM allows. */
const attributePath = fc
  .tuple(
    fc.oneof(
      { weight: 5, arbitrary: fc.constant("") },
      { weight: 1, arbitrary: fc.constant("urn:ietf:params:scim:schemas:core:2.0:User:") },
    ),
    fc.oneof(
      { weight: 2, arbitrary: attributeName.map((name) => [name]) },
      { weight: 1, arbitrary: fc.array(attributeName, { minLength: 2, maxLength: 3 }) },
    ),
  )
  .map(([urn, names]) => `${urn}${names.join(".")}`);

/** `order`, `sortby` and `fields` lists: `-startsAt,name`. */
const nameList = fc
  .array(
    fc.tuple(fc.constantFrom("", "", "-", "+"), attributePath).map(([sign, path]) => `${sign}${path}`),
    { minLength: 1, maxLength: 3 },
  )
  .map((items) => items.join(","));

const literal = fc.oneof(
  fc.string({ maxLength: 8 }).map((text) => JSON.stringify(text)),
  fc.integer().map(String),
  fc.constantFrom("true", "false", "null"),
);

/** A SCIM filter (RFC 7644 section 3.4.2.2) over such paths: comparisons, presence, value paths, and/or/not. */
const filterExpression = fc.letrec<{ filter: string }>((tie) => ({
  filter: fc.oneof(
    { depthSize: "small" },
    fc
      .tuple(attributePath, fc.constantFrom("eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"), literal)
      .map(([path, op, value]) => `${path} ${op} ${value}`),
    attributePath.map((path) => `${path} pr`),
    fc.tuple(attributePath, tie("filter")).map(([path, inner]) => `${path}[${inner}]`),
    fc.tuple(tie("filter"), fc.constantFrom("and", "or"), tie("filter")).map(([a, op, b]) => `${a} ${op} ${b}`),
    tie("filter").map((inner) => `not (${inner})`),
  ),
})).filter;

/** What the server may read names out of: a path, a list, a filter. */
const nameExpression = fc.oneof(attributePath, nameList, filterExpression);

/** A free-text parameter: no pattern, format or choice says what it holds. */
const isFreeText = (schema: JsonSchema) =>
  schema.type === "string" && schema.pattern === undefined && schema.format === undefined;

/**
 * encodeURIComponent, except that a lone surrogate goes out as a careless encoder sends it (its
 * three WTF-8 bytes, `%ED%A0%80`) instead of throwing: escapes that are not UTF-8.
 */
function escapeText(text: string): string {
  if (text.isWellFormed()) return encodeURIComponent(text);
  let out = "";
  for (const char of text) {
    const unit = char.charCodeAt(0);
    out +=
      char.length === 1 && unit >= 0xd800 && unit <= 0xdfff
        ? percentEscaped([0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)])
        : encodeURIComponent(char);
  }
  return out;
}

const encodePair = (key: string, value: unknown) =>
  `${escapeText(key)}=${escapeText(typeof value === "string" ? value : (JSON.stringify(value) ?? ""))}`;

function queryArbitrary(schema: JsonSchema | undefined): fc.Arbitrary<string[]> {
  const fromObject = (value: unknown) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.entries(value).map(([k, v]) => encodePair(k, v))
      : [encodePair("q", value)];
  const valid = schema ? validValue(schema).map(fromObject) : fc.constant([] as string[]);
  const mutated = schema ? mutatedValue(schema).map(fromObject) : fc.constant([] as string[]);
  // the same parameter twice, with different values
  const duplicated = valid.chain((pieces) =>
    pieces.length === 0
      ? fc.constant<string[]>(["page=1", "page=2"])
      : fc.nat().map((n) => {
          const piece = pieces[n % pieces.length]!;
          return [...pieces, `${piece.split("=")[0]}=${n}`];
        }),
  );
  const hostile = fc
    .tuple(valid, fc.subarray(HOSTILE_QUERY, { minLength: 1, maxLength: 2 }))
    .map(([pieces, extra]) => [...pieces, ...extra]);
  const properties = schema?.properties ?? {};
  const freeText = Object.keys(properties).filter((name) => isFreeText(properties[name]!));
  // name expressions in one or two free-text parameters, alone: no other parameter refuses the
  // request before the names are read
  const named =
    freeText.length > 0
      ? fc
          .tuple(
            fc.oneof(
              { weight: 3, arbitrary: fc.constantFrom(...freeText).map((name) => [name]) },
              {
                weight: 1,
                arbitrary: fc.subarray(freeText, { minLength: 1, maxLength: Math.min(2, freeText.length) }),
              },
            ),
            fc.array(nameExpression, { minLength: 2, maxLength: 2 }),
          )
          .map(([chosen, expressions]) => chosen.map((name, i) => encodePair(name, expressions[i])))
      : valid;
  // a parameter named as every object's members are, or escapes that are not UTF-8 in a value or a name
  const parameterNames = Object.keys(properties).length > 0 ? Object.keys(properties) : ["q"];
  const inheritedParameter = fc
    .tuple(valid, inheritedName)
    .map(([pieces, name]) => [...pieces, `${encodeURIComponent(name)}=1`]);
  const notUtf8 = fc
    .tuple(valid, fc.constantFrom(...parameterNames), fc.string({ maxLength: 6 }), invalidUtf8, fc.nat(3))
    .map(([pieces, name, before, bytes, where]) => [
      ...pieces,
      where === 0
        ? `${percentEscaped(bytes)}=1`
        : `${encodeURIComponent(name)}=${encodeURIComponent(before)}${percentEscaped(bytes)}`,
    ]);
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant<string[]>([]) },
    { weight: 3, arbitrary: valid },
    { weight: 2, arbitrary: mutated },
    { weight: 4, arbitrary: named },
    { weight: 1, arbitrary: duplicated },
    { weight: 1, arbitrary: hostile },
    { weight: 1, arbitrary: inheritedParameter },
    { weight: 1, arbitrary: notUtf8 },
  );
}

const otherHeaders = fc
  .record(
    {
      accept: fc.constantFrom("application/json", "text/html", "application/xml", "*/*"),
      "if-match": fc.oneof(
        fc.constantFrom('"1"', "*", 'W/"1"', '"999999999999"', "garbage", '""'),
        // what inject passes on as given (a lone surrogate) and what HTTP carries as Latin-1
        illFormedText,
        fc.string({ unit: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)), minLength: 1 }),
      ),
      "if-none-match": fc.constantFrom("*", '"1"'),
      "x-forwarded-for": fc.constantFrom("1.2.3.4", "::1, 10.0.0.1", "garbage"),
    },
    { requiredKeys: [] },
  )
  .map((headers): Record<string, string> => ({ ...headers }));

/** Mostly what a client sends with the body (JSON, or nothing), now and then something odd. */
const contentType = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
);

/** Requests for `route`, from `callers` (every kind by default). */
export function requestArbitrary(
  route: RouteEntry,
  callers: readonly CallerKind[] = CALLER_KINDS,
): fc.Arbitrary<FuzzRequest> {
  const paramNames = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
  const paramSchemas = (route.params as JsonSchema | undefined)?.properties ?? {};
  const params = fc.record(Object.fromEntries(paramNames.map((n) => [n, segmentArbitrary(paramSchemas[n])])));
  return fc
    .record({
      caller: fc.constantFrom(...callers),
      path: fc.constantFrom(route.path, ...(route.aliases ?? [])),
      params,
      query: queryArbitrary(route.query as JsonSchema | undefined),
      body: bodyArbitrary(route),
      headers: otherHeaders,
      contentType,
      oddAuthorization: fc.option(fc.constantFrom(...ODD_AUTHORIZATION), { freq: 4 }),
    })
    .map(({ oddAuthorization, contentType, headers, ...r }) => ({
      ...r,
      headers: {
        ...headers,
        ...(contentType !== null
          ? contentType !== "" && { "content-type": contentType }
          : r.body.kind !== "none" && { "content-type": "application/json" }),
      },
      method: route.method,
      ...(r.caller === "anonymous" && oddAuthorization !== null && { authorization: oddAuthorization }),
    }));
}

/** The URL of a request, its path parameters resolved against the database's identifiers. */
export function urlOf(request: FuzzRequest, identifiers: readonly string[]): { path: string; query: string } {
  const path = request.path.replace(/:([A-Za-z0-9_]+)/g, (_whole, name: string) => {
    const segment = request.params[name]!;
    if ("raw" in segment) return segment.raw;
    const text =
      "pool" in segment ? (identifiers[segment.pool % Math.max(1, identifiers.length)] ?? "none") : segment.text;
    return escapeText(text) || "%20";
  });
  return { path, query: request.query.join("&") };
}

/** The body as bytes, and the form parameters an OAuth signature covers. */
export function payloadOf(request: FuzzRequest): { bytes?: Buffer; form?: Record<string, string> } {
  const body = request.body;
  if (body.kind === "none") return {};
  const bytes = body.kind === "json" ? Buffer.from(JSON.stringify(body.value) ?? "null") : body.bytes;
  const form =
    request.headers["content-type"] === "application/x-www-form-urlencoded"
      ? safeForm(bytes.toString("utf8"))
      : undefined;
  return { bytes, form };
}

function safeForm(text: string): Record<string, string> | undefined {
  try {
    return Object.fromEntries(new URLSearchParams(text));
  } catch {
    return undefined;
  }
}

const INHERITED_TOKEN = new RegExp(
  // a name starts after anything but a name's character, or after an escape (`%20constructor`)
  `(?<=^|[^\\w$]|%[0-9A-Fa-f]{2})(?:${INHERITED_NAMES.join("|")})(?![\\w$])`,
  "gi",
);

/** ROT13 of the letters: a made-up name of the same length, case and shape (`constructor`: `pbafgehpgbe`). */
const madeUp = (name: string) =>
  name.replace(/[A-Za-z]/g, (c) => {
    const base = c <= "Z" ? 65 : 97;
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base);
  });

/**
 * The URL with each name every object inherits (in any case) replaced by a made-up one of the
 * same shape, or undefined when it holds none: the twin request a server that takes such names
 * as plain names answers alike.
 */
export function withMadeUpNames(url: string): string | undefined {
  const twin = url.replace(INHERITED_TOKEN, madeUp);
  return twin === url ? undefined : twin;
}
