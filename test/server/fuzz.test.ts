/**
 * Schema-driven fuzzing of every operation of the contract, under every kind of caller.
 *
 * Operations come from the contract's route table (`allRoutes`) and their requests from its
 * TypeBox schemas, so an operation added to the contract is fuzzed here without new test code.
 * For each operation and each caller (anonymous, member, support, admin, a user whose first
 * login is pending, OAuth token credentials) fast-check sends valid requests and mutations of
 * them (wrong types, missing and extra fields, limits, 1 MiB strings), hostile bodies (invalid
 * UTF-8, NUL bytes, nesting 10,000 deep), odd content types, path parameters with `../`, `%00`,
 * `%2F`, and duplicated query parameters. Two classes reach every position where they can go:
 * names every JavaScript object inherits (`__proto__`, `constructor`, `toString`, ... read from the
 * runtime) as body member names, query parameter names, path segments, and the names in sort
 * lists, field lists and filter paths; and text that is not Unicode (lone surrogates in any string
 * or member name of a body, bytes that are not UTF-8 in a body, escapes that are not UTF-8 in a
 * query or a path, odd If-Match values). The invariants are in test/helpers/fuzz-invariants.ts;
 * a read holding an inherited name is sent twice, the second time with made-up names in their
 * place, and must be answered alike. The credential rules of spec 1.1 are checked as the world
 * changes: OAuth token credentials never manage an account (an operation the contract marks
 * `managesAccount`, a temporary password), and what support gave two users before an admin
 * promoted them (a temporary password, an invitation link) never works again, whatever the
 * fuzzed requests do to those accounts. The same wrong proof sent in parallel is counted once for each
 * time it was checked (docs/security.md, failed proofs sent at once).
 *
 * In-process or real HTTP: the bulk goes through `app.inject()`, the same app code without a
 * socket, which is what makes thousands of cases fit in a CI run. inject cannot send what only a
 * socket carries: raw bytes outside ASCII in the request line and headers, malformed request
 * lines, conflicting framing headers. Those few go over a real socket to the same app listening
 * on an ephemeral port, so both parts share one database and one digest.
 *
 * The database is SQLite in CI; `npm run fuzz` adds PostgreSQL (FUZZ_POSTGRES=1), where the
 * fuzzer found NUL in text to be a 500 that SQLite never showed.
 *
 * CI runs FUZZ_RUNS (default 6) cases per operation and caller; `npm run fuzz` runs many more.
 * FUZZ_SEED replays a run (fast-check prints the seed and the request of a failure); shrinking is
 * off unless FUZZ_SHRINK=1, because the cases share one database and a shrunk replay meets
 * another state. FUZZ_STATS=1 prints how the answers spread over status and code.
 */
import { connect } from "node:net";
import { Ajv } from "ajv";
import formats from "ajv-formats";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../../src/contract/index.js";
import type { RouteEntry } from "../../src/contract/route.js";
import { databaseDigest } from "../helpers/db-digest.js";
import {
  type Answer,
  acceptedIllFormedText,
  authorizationPage,
  changedOnRefusal,
  delegatedManagedAccount,
  dependsOnInheritedName,
  leaksSecret,
  notAProblem,
  sentPasswords,
  serverError,
  withoutSecurityHeaders,
} from "../helpers/fuzz-invariants.js";
import { type FuzzRequest, payloadOf, requestArbitrary, urlOf, withMadeUpNames } from "../helpers/fuzz-requests.js";
import { CALLER_KINDS, FuzzWorld } from "../helpers/fuzz-world.js";
import { authHeader, createConsumer, INJECT_BASE, injectFlow, signer } from "../helpers/oauth.js";
import { startPostgresTestServer } from "../helpers/postgres.js";
import { type JsonSchema, validValue } from "../helpers/schema-arbitrary.js";
import { signIn, startTestServer, type TestServer, USER_PASSWORD, useTestServer } from "../helpers/server.js";
import { codeOf } from "../helpers/totp.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 6);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

/** FUZZ_STATS=1: how the answers spread over status and code, per operation and caller (what the run reached). */
const stats = new Map<string, Map<string, number>>();
function tally(route: RouteEntry, request: FuzzRequest, answer: Answer): void {
  if (process.env.FUZZ_STATS !== "1") return;
  const key = `${route.id} ${request.caller}`;
  const code = answer.status >= 400 ? (/"code":"(\w+)"/.exec(answer.body)?.[1] ?? "?") : "";
  const bucket = stats.get(key) ?? new Map<string, number>();
  bucket.set(`${answer.status}${code && ` ${code}`}`, (bucket.get(`${answer.status}${code && ` ${code}`}`) ?? 0) + 1);
  stats.set(key, bucket);
}

/** Longer than any one case takes: what a request prunes expired before then. */
const SWEEP_MARGIN_MS = 60_000;

/** Sends one fuzzed request in-process and returns what is wrong with the answer, if anything. */
async function fuzzCase(world: FuzzWorld, route: RouteEntry, request: FuzzRequest): Promise<string | undefined> {
  const db = world.app.services.store.db;
  const { path, query } = urlOf(request, await world.identifiers());
  const url = query ? `${path}?${query}` : path;
  const { bytes, form } = payloadOf(request);
  const authorization = request.authorization ?? world.authorization(request.caller, request.method, url, form);
  const hidden = [
    ...(await world.secretsHiddenFrom(request.caller)),
    ...(request.body.kind === "json" ? sentPasswords(request.body.value) : []),
  ];
  // one instant for both digests, past anything the request may prune (see db-digest.ts)
  const asOf = new Date(world.app.services.clock().getTime() + SWEEP_MARGIN_MS);
  const before = await databaseDigest(db, { asOf });
  const response = await world.app.inject({
    method: request.method as "GET",
    url,
    headers: { ...request.headers, ...(authorization !== undefined && { authorization }) },
    ...(bytes && { payload: bytes }),
  });
  const answer: Answer = { status: response.statusCode, headers: response.headers, body: response.body };
  tally(route, request, answer);
  const after = answer.status >= 400 ? await databaseDigest(db, { asOf }) : undefined;
  const wrong =
    serverError(answer) ??
    (authorizationPage(route.id, request, answer) ? undefined : notAProblem(answer, route.scim === "wire")) ??
    changedOnRefusal(answer, before, after) ??
    leaksSecret(answer, hidden) ??
    withoutSecurityHeaders(answer) ??
    delegatedManagedAccount(route, request, answer) ??
    acceptedIllFormedText(answer, {
      contentType: request.headers["content-type"],
      ...(route.body && request.body.kind === "json" && { json: request.body.value }),
      ...(route.body && { bytes }),
      ...(route.query && { query }),
    }) ??
    (await differsWithMadeUpNames(world, route, request, url, answer));
  // work a request left running after its answer (mail) ends before the next digest is taken
  await world.app.services.mailer.idle();
  if (answer.status < 400) world.noteIssued(request.caller, answer.body);
  if (answer.status < 400 && request.method !== "GET") await world.heal();
  // a change may have touched the promoted users: what support gave them must still not work
  const revived = answer.status < 400 && request.method !== "GET" ? await world.supportIssuedRevived() : undefined;
  const found = wrong ?? revived;
  return found && `${route.id} as ${request.caller}: ${request.method} ${url.slice(0, 300)} → ${found}`;
}

/**
 * A read that holds a name every object inherits, sent again with made-up names in their place:
 * the server must answer both alike. Only reads, and not the OAuth endpoint, whose GET issues
 * credentials: sending either twice must change nothing. Not for the OAuth caller either: the
 * package the fuzzer signs with (oauth-1.0a) reads the query into a plain object itself, so it
 * signs a parameter named `toString` wrongly and its request is refused (401) where the twin's is
 * not.
 */
async function differsWithMadeUpNames(
  world: FuzzWorld,
  route: RouteEntry,
  request: FuzzRequest,
  url: string,
  answer: Answer,
): Promise<string | undefined> {
  if (request.method !== "GET" || route.id.startsWith("oauth.") || request.caller === "oauth") return undefined;
  const twinUrl = withMadeUpNames(url);
  if (twinUrl === undefined) return undefined;
  const authorization = request.authorization ?? world.authorization(request.caller, request.method, twinUrl);
  const twin = await world.app.inject({
    method: "GET",
    url: twinUrl,
    headers: { ...request.headers, ...(authorization !== undefined && { authorization }) },
  });
  const twinAnswer: Answer = { status: twin.statusCode, headers: twin.headers, body: twin.body };
  return serverError(twinAnswer) ?? dependsOnInheritedName(answer, twinAnswer, twinUrl);
}

async function fuzzOperation(world: FuzzWorld, route: RouteEntry): Promise<void> {
  for (const caller of CALLER_KINDS) {
    await fc.assert(
      fc.asyncProperty(requestArbitrary(route, [caller]), async (request) => {
        const wrong = await fuzzCase(world, route, request);
        if (wrong) throw new Error(wrong);
      }),
      { numRuns: RUNS, ...(SEED !== undefined && { seed: SEED }), endOnFailure: process.env.FUZZ_SHRINK !== "1" },
    );
  }
}

/** What a socket got back: status, headers and body of the first response. */
function parseRawResponse(data: Buffer): Answer & { fromApp: boolean } {
  const text = data.toString("utf8");
  const end = text.indexOf("\r\n\r\n");
  const head = end === -1 ? text : text.slice(0, end);
  const [statusLine = "", ...lines] = head.split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const status = Number(statusLine.split(" ")[1] ?? 0);
  const body = end === -1 ? "" : text.slice(end + 4, end + 4 + Number(headers["content-length"] ?? text.length));
  // the app sets x-request-id on the answers of its routes and answers errors as problem
  // documents; what Node's parser refuses never reaches it
  const fromApp = "x-request-id" in headers || (headers["content-type"] ?? "").startsWith("application/problem+json");
  return { status, headers, body, fromApp };
}

/** Whether `data` holds a whole response: its head and the Content-Length bytes of body. */
function complete(data: Buffer): boolean {
  const text = data.toString("latin1");
  const end = text.indexOf("\r\n\r\n");
  if (end === -1) return false;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
  return length ? data.length >= end + 4 + Number(length[1]) : text.endsWith("0\r\n\r\n");
}

/**
 * Writes `bytes` on a fresh connection and reads one response. The socket stays open for writing
 * until the answer is in: a client that half-closes early gets no answer from a handler still
 * waiting on the database.
 */
function rawExchange(port: number, bytes: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      if (complete(data)) socket.destroy();
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(data));
    socket.setTimeout(15_000, () => socket.destroy(new Error("no answer within 15 s")));
  });
}

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "latin1") : Buffer.from(p))));

/**
 * What only a socket can send. `parser`: Node's HTTP parser refuses it before any app code runs,
 * and Fastify's client error handler answers; those answers become problem documents with part 3
 * of issue 11 (clientErrorHandler), so until then they are held to "a 4xx, never a 5xx" and to
 * the problem document only when the app answered.
 */
const RAW_CASES: { name: string; layer: "app" | "parser"; request: (auth: string) => Buffer }[] = [
  {
    name: "raw bytes above ASCII in the path",
    layer: "parser",
    request: (a) => bytes("GET /Resources/", [0xff, 0xfe], ` HTTP/1.1\r\nHost: x\r\nAuthorization: ${a}\r\n\r\n`),
  },
  {
    name: "invalid UTF-8 escaped in the path",
    layer: "app",
    request: (a) => bytes(`GET /Resources/%FF%FE HTTP/1.1\r\nHost: x\r\nAuthorization: ${a}\r\n\r\n`),
  },
  {
    name: "NUL escaped in the path",
    layer: "app",
    request: (a) => bytes(`GET /api/crm/v1/events/a%00b HTTP/1.1\r\nHost: x\r\nAuthorization: ${a}\r\n\r\n`),
  },
  {
    name: "dot segments in the path",
    layer: "app",
    request: (a) => bytes(`DELETE /Resources/../../health HTTP/1.1\r\nHost: x\r\nAuthorization: ${a}\r\n\r\n`),
  },
  {
    name: "encoded slashes in the path",
    layer: "app",
    request: (a) =>
      bytes(`DELETE /api/crm/v1/events/..%2F..%2F..%2FResources HTTP/1.1\r\nHost: x\r\nAuthorization: ${a}\r\n\r\n`),
  },
  {
    name: "raw bytes above ASCII in the query",
    layer: "parser",
    request: (a) =>
      bytes(
        "GET /api/crm/v1/events?filter=name%20eq%20%22",
        [0xe9],
        `%22 HTTP/1.1\r\nHost: x\r\nAuthorization: ${a}\r\n\r\n`,
      ),
  },
  {
    name: "obs-text in the Authorization header",
    layer: "app",
    request: () =>
      bytes("GET /auth/isLogged HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ", [0xff, 0xfe, 0xc3], "\r\n\r\n"),
  },
  {
    name: "NUL in a header value",
    layer: "parser",
    request: (a) => bytes(`GET /auth/isLogged HTTP/1.1\r\nHost: x\r\nAuthorization: ${a}\r\nX-Note: a\u0000b\r\n\r\n`),
  },
  { name: "a malformed request line", layer: "parser", request: () => bytes("GARBAGE\r\n\r\n") },
  { name: "an unknown HTTP version", layer: "parser", request: () => bytes("GET /health HTTP/9.9\r\nHost: x\r\n\r\n") },
  {
    name: "an absolute-form target",
    layer: "app",
    request: (a) => bytes(`GET http://elsewhere.example/Resources HTTP/1.1\r\nHost: x\r\nAuthorization: ${a}\r\n\r\n`),
  },
  {
    name: "Content-Length beside chunked",
    layer: "parser",
    request: (a) =>
      bytes(
        `POST /api/crm/v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: ${a}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}`,
      ),
  },
  {
    name: "two different Content-Lengths",
    layer: "parser",
    request: (a) =>
      bytes(
        `POST /api/crm/v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: ${a}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x`,
      ),
  },
  {
    name: "invalid UTF-8 in a chunked body",
    layer: "app",
    request: (a) =>
      bytes(
        `POST /Resources HTTP/1.1\r\nHost: x\r\nAuthorization: ${a}\r\nContent-Type: application/scim+json\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n{"a":"\r\n3\r\n`,
        [0xff, 0x22, 0x7d],
        "\r\n0\r\n\r\n",
      ),
  },
  {
    name: "a chunk size that is not hex",
    layer: "parser",
    request: (a) =>
      bytes(
        `POST /Resources HTTP/1.1\r\nHost: x\r\nAuthorization: ${a}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      ),
  },
  {
    name: "two Host headers",
    layer: "app",
    request: (a) => bytes(`GET /Resources HTTP/1.1\r\nHost: a\r\nHost: b\r\nAuthorization: ${a}\r\n\r\n`),
  },
  {
    name: "a duplicated Authorization",
    layer: "app",
    request: (a) =>
      bytes(`GET /auth/isLogged HTTP/1.1\r\nHost: x\r\nAuthorization: ${a}\r\nAuthorization: Bearer x\r\n\r\n`),
  },
  {
    name: "a JSON body without Content-Length",
    layer: "parser",
    request: () =>
      bytes(
        `POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n{"userName":"a","password":"b"}`,
      ),
  },
];

const LOGIN_LIMIT = { max: 1_000_000, timeWindowMs: 60_000 };
/** a case can renew a caller (two argon2 hashes): the budget grows with the runs */
const OPERATION_TIMEOUT_MS = Math.max(120_000, RUNS * CALLER_KINDS.length * 2_000);

describe("the fuzzer's valid values", () => {
  // a generator that drifted from the schemas would fuzz only the validator
  it.each(
    allRoutes.flatMap((route) =>
      (["params", "query", "body"] as const).flatMap((part) =>
        route[part] ? [{ id: route.id, part, schema: route[part] }] : [],
      ),
    ),
  )("$id $part: what validValue makes, the contract's schema accepts", ({ schema }) => {
    const ajv = new Ajv({ strict: false });
    // ajv-formats is CommonJS: its function is the default export's default
    (formats as unknown as { default: (ajv: Ajv) => void }).default(ajv);
    const check = ajv.compile(schema);
    for (const value of fc.sample(validValue(schema as JsonSchema), 25))
      expect(check(value), JSON.stringify(check.errors)).toBe(true);
  });
});

/**
 * A delegated credential on its own recovery address (issue 41): an admin's API token and its
 * OAuth grant send every shape of write that reaches the User's `emails` (PUT and PATCH of
 * /Resources, /Users and /Me, /Bulk; ops and names in any case, value filters, path-less replaces,
 * the core URN) to the admin's own User; none may move an address or its primary mark (where the
 * anonymous renewPassword mails the reset link), and none is a 5xx. Bounded: RUNS x 8 cases.
 */
describe("fuzzing a delegated credential on its own recovery address (SQLite)", () => {
  const server = useTestServer({ loginRateLimit: LOGIN_LIMIT });
  const OWN = "owner@example.com";
  const senders: { name: string; authorize(method: string, url: string): string }[] = [];
  let self = "";

  beforeAll(async () => {
    const owner = await server.signIn({ userName: "fuzz.owner", roles: ["admin"], email: OWN });
    self = owner.id;
    const token = (await owner.call("POST", "/auth/tokens", { name: "fuzz" })).json() as { token: string };
    const consumer = await createConsumer(server.app, server.token, { name: "fuzz address" });
    const { access } = await injectFlow(server.app, consumer, owner.token);
    senders.push(
      { name: "API token", authorize: () => `Bearer ${token.token}` },
      {
        name: "OAuth grant",
        authorize: (method, url) => authHeader(signer(consumer), { method, url: `${INJECT_BASE}${url}` }, access),
      },
    );
  });

  /** The addresses of the owner's User as the reset mail reads them: each, in any case, and the primary one. */
  async function addresses(): Promise<string[]> {
    const user = (await server.call("GET", `/Resources/${self}`)).json() as {
      emails?: { value?: string; primary?: boolean }[];
    };
    return (user.emails ?? []).map((e) => `${String(e.value).toLowerCase()} ${e.primary === true}`).sort();
  }

  const email = fc.record(
    {
      value: fc.constantFrom("attacker@evil.example", OWN.toUpperCase(), OWN, "second@example.com"),
      primary: fc.oneof(fc.boolean(), fc.constantFrom("True", "False")),
      type: fc.constantFrom("work", "home"),
    },
    { requiredKeys: ["value"] },
  );
  const emails = fc.oneof(fc.array(email, { maxLength: 3 }), email);
  const name = fc.constantFrom("emails", "Emails", "EMAILS", "urn:ietf:params:scim:schemas:core:2.0:User:emails");
  const path = fc.oneof(
    name,
    fc.constantFrom(
      "emails[primary eq true].value",
      'emails[type eq "work"].value',
      `emails[value eq "${OWN}"]`,
      "emails[primary eq true].primary",
      'emails[type eq "home"].primary',
    ),
  );
  const operation = fc.oneof(
    fc.record({
      op: fc.constantFrom("add", "replace", "remove", "Add", "Replace", "Remove", "REPLACE"),
      path,
      value: fc.oneof(emails, fc.constantFrom("attacker@evil.example", "False", true, false)),
    }),
    fc.record({
      op: fc.constantFrom("replace", "add", "Replace"),
      value: fc.dictionary(name, emails, { minKeys: 1, maxKeys: 2 }),
    }),
  );
  const patch = fc.array(operation, { minLength: 1, maxLength: 3 }).map((Operations) => ({
    schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
    Operations,
  }));
  /** A request as a function of the User as it is now: its method, URL and body. */
  const write = fc.oneof(
    fc
      .tuple(fc.constantFrom("/Resources/{id}", "/Users/{id}", "/Me"), patch)
      .map(([url, body]) => (_current: Record<string, unknown>) => ({
        method: "PATCH" as const,
        url: url.replace("{id}", self),
        body,
      })),
    fc
      .tuple(fc.constantFrom("/Resources/{id}", "/Users/{id}", "/Me"), fc.option(fc.array(email, { maxLength: 3 })))
      .map(([url, next]) => ({ meta: _meta, emails: _emails, ...current }: Record<string, unknown>) => ({
        method: "PUT" as const,
        url: url.replace("{id}", self),
        body: { ...current, schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], ...(next && { emails: next }) },
      })),
    patch.map((data) => (_current: Record<string, unknown>) => ({
      method: "POST" as const,
      url: "/Bulk",
      body: {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],
        Operations: [{ method: "PATCH", path: `/Users/${self}`, data }],
      },
    })),
  );

  it("never moves the owner's addresses, whatever the shape of the write", async () => {
    const before = await addresses();
    await fc.assert(
      fc.asyncProperty(write, fc.integer({ min: 0, max: senders.length - 1 }), async (make, which) => {
        const current = (await server.call("GET", `/Resources/${self}`)).json() as Record<string, unknown>;
        const { method, url, body } = make(current);
        const answer = await server.app.inject({
          method,
          url,
          headers: { authorization: senders[which]!.authorize(method, url) },
          payload: body,
        });
        expect(answer.statusCode, `${senders[which]!.name} ${method} ${url}: ${answer.body}`).toBeLessThan(500);
        expect(
          await addresses(),
          `${senders[which]!.name} ${method} ${url} ${JSON.stringify(body)}: ${answer.statusCode}`,
        ).toEqual(before);
      }),
      { numRuns: RUNS * 8, ...(SEED !== undefined && { seed: SEED }), endOnFailure: process.env.FUZZ_SHRINK !== "1" },
    );
  });
});

const databases = [
  { name: "SQLite", start: () => startTestServer({ loginRateLimit: LOGIN_LIMIT }) },
  // `npm run fuzz` also runs it on PostgreSQL (FUZZ_POSTGRES=1): CI's bounded run keeps to SQLite
  ...(process.env.FUZZ_POSTGRES === "1"
    ? [{ name: "PostgreSQL", start: () => startPostgresTestServer({ loginRateLimit: LOGIN_LIMIT }) }]
    : []),
];

describe.each(databases)("fuzzing every operation of the contract ($name)", ({ start }) => {
  let server: TestServer;
  let world: FuzzWorld;
  let port: number;

  beforeAll(async () => {
    server = await start();
    world = await FuzzWorld.create(server);
    await server.app.listen({ port: 0, host: "127.0.0.1" });
    port = (server.app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const [key, bucket] of stats) console.log(key, Object.fromEntries(bucket));
    stats.clear();
    await server?.close();
  });
  it.each(RAW_CASES)("over a socket: $name", async ({ layer, request }) => {
    await world.heal();
    const db = server.app.services.store.db;
    const asOf = new Date(server.app.services.clock().getTime() + SWEEP_MARGIN_MS);
    const before = await databaseDigest(db, { asOf });
    const answer = parseRawResponse(await rawExchange(port, request(world.authorization("admin", "GET", "/")!)));
    const after = await databaseDigest(db, { asOf });
    expect(serverError(answer)).toBeUndefined();
    expect(changedOnRefusal(answer, before, after)).toBeUndefined();
    expect(leaksSecret(answer, await world.secretsHiddenFrom("admin"))).toBeUndefined();
    if (layer === "app" || answer.fromApp) expect(notAProblem(answer)).toBeUndefined();
    if (layer === "app") {
      expect(answer.fromApp, `the app answers: ${answer.status} ${answer.body}`).toBe(true);
      expect(withoutSecurityHeaders(answer)).toBeUndefined();
    } else expect(answer.status, "the parser refuses it").toBe(400);
  });

  for (const route of allRoutes) {
    it(`${route.method} ${route.path} (${route.id})`, async () => fuzzOperation(world, route), OPERATION_TIMEOUT_MS);
  }

  it(
    "counts each of the same wrong proof sent in parallel: the account's failures are the failures checked",
    async () => {
      const login = allRoutes.find((route) => route.id === "auth.login")!;
      const burst = fc.record({
        // a login the contract's schema makes, its proof then made wrong: the password, or the code
        body: validValue(login.body as JsonSchema),
        proof: fc.constantFrom("password", "otp"),
        wrong: fc.string({ minLength: 1, maxLength: 40 }),
        size: fc.integer({ min: 2, max: 16 }),
      });
      await fc.assert(
        fc.asyncProperty(burst, async ({ body, proof, wrong, size }) => {
          const user = await proofTarget(server, proof === "otp");
          const sent = { ...(body as object), userName: user.userName, password: USER_PASSWORD, [proof]: wrong };
          const answers = await Promise.all(
            Array.from({ length: size }, () =>
              server.app.inject({ method: "POST", url: "/auth/login", payload: sent }),
            ),
          );
          const checked = answers.filter(
            (a) => a.statusCode === 401 && /"code":"invalid_(credentials|otp)"/.test(a.body),
          );
          for (const answer of answers)
            expect(serverError({ status: answer.statusCode, headers: {}, body: answer.body })).toBeUndefined();
          expect(await failedLogins(server, user.id), answers.map((a) => a.statusCode).join(" ")).toBe(checked.length);
        }),
        { numRuns: RUNS, ...(SEED !== undefined && { seed: SEED }), endOnFailure: process.env.FUZZ_SHRINK !== "1" },
      );
    },
    OPERATION_TIMEOUT_MS,
  );
});

/** A fresh member to send wrong proofs for, with an active TOTP factor when asked. */
async function proofTarget(server: TestServer, withFactor: boolean): Promise<{ id: string; userName: string }> {
  const user = await signIn(server.app, { userName: `proof.${crypto.randomUUID().slice(0, 8)}`, roles: ["member"] });
  if (!withFactor) return user;
  const started = await user.call("POST", "/auth/mfa/totp");
  const { secret } = started.json() as { secret: string };
  const verified = await user.call("POST", "/auth/mfa/totp/verify", { code: codeOf(secret) });
  expect(verified.statusCode, verified.body).toBe(200);
  return user;
}

const failedLogins = async (server: TestServer, userId: string) =>
  (
    await server.app.services.store.db
      .selectFrom("credentials")
      .select("failed_logins")
      .where("user_id", "=", userId)
      .executeTakeFirstOrThrow()
  ).failed_logins;
