/**
 * Requests for one contract operation, valid and hostile, as fast-check arbitraries. Everything
 * is read from the route entry (method, path and aliases, params, query and body schemas), so an
 * operation added to the contract is fuzzed without a line here.
 *
 * A generated request is a template: a path parameter may say "the n-th identifier of the
 * database", resolved when the request is sent, so that valid requests reach real rows.
 */
import fc from "fast-check";
import * as contract from "../../src/contract/index.js";
import type { RouteEntry } from "../../src/contract/route.js";
import { CALLER_KINDS, type CallerKind } from "./fuzz-world.js";
import { HOSTILE_KEYS, type JsonSchema, mutatedValue, ONE_MIB, validValue } from "./schema-arbitrary.js";

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

function withFixed(arbitrary: fc.Arbitrary<unknown>, fixed: Record<string, unknown>): fc.Arbitrary<unknown> {
  return arbitrary.map((v) => (v && typeof v === "object" && !Array.isArray(v) ? { ...v, ...fixed } : v));
}

function bodyArbitrary(route: RouteEntry): fc.Arbitrary<Body> {
  const hostile = fc.constantFrom(...HOSTILE_BODIES).map((b): Body => ({ kind: "raw", ...b }));
  const spliced = fc
    .tuple(route.body ? validValue(route.body as JsonSchema) : fc.constant({}), fc.constantFrom(...HOSTILE_KEYS))
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
  return fc.oneof(
    { weight: 3, arbitrary: valid.map((value): Body => ({ kind: "json", value })) },
    { weight: 3, arbitrary: mutated.map((value): Body => ({ kind: "json", value })) },
    { weight: 1, arbitrary: spliced },
    { weight: 2, arbitrary: hostile },
    { weight: 1, arbitrary: fc.constant<Body>({ kind: "none" }) },
  );
}

function segmentArbitrary(schema: JsonSchema | undefined): fc.Arbitrary<Segment> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.nat().map((pool): Segment => ({ pool })) },
    { weight: 2, arbitrary: (schema ? validValue(schema) : fc.string()).map((v): Segment => ({ text: String(v) })) },
    { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS).map((raw): Segment => ({ raw })) },
  );
}

const encodePair = (key: string, value: unknown) =>
  `${encodeURIComponent(key)}=${encodeURIComponent(typeof value === "string" ? value : (JSON.stringify(value) ?? ""))}`;

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
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant<string[]>([]) },
    { weight: 3, arbitrary: valid },
    { weight: 2, arbitrary: mutated },
    { weight: 1, arbitrary: duplicated },
    { weight: 1, arbitrary: hostile },
  );
}

const otherHeaders = fc
  .record(
    {
      accept: fc.constantFrom("application/json", "text/html", "application/xml", "*/*"),
      "if-match": fc.constantFrom('"1"', "*", 'W/"1"', '"999999999999"', "garbage", '""'),
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
    return encodeURIComponent(text) || "%20";
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
