/**
 * The whole-number query parameters and their ranges are the contract's: each operation's query
 * schema states them, the server refuses what falls outside with the schema's problem document,
 * and /openapi.json shows them. Every such parameter of every operation is taken from the
 * contract, so a range added there is tested here too. And an operation takes only the
 * parameters of its own query schema.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes, buildPath, QUERY_INTEGER_LIMIT, type RouteEntry } from "../../src/contract/index.js";
import { caller, loginToken, problemOf, startTestServer, type TestServer } from "../helpers/server.js";

interface IntegerSchema {
  type?: string;
  minimum?: number;
  maximum?: number;
}

/** Every whole-number query parameter of the contract, with the operation that takes it. */
// the SCIM endpoints answer in SCIM's error bodies: their paging is checked by the SCIM suites
const PARAMETERS = allRoutes
  .filter((route) => route.scim !== "wire")
  .flatMap((route) => {
    const properties = (route.query as { properties?: Record<string, IntegerSchema> } | undefined)?.properties ?? {};
    return Object.entries(properties)
      .filter(([, schema]) => schema.type === "integer")
      .map(([name, schema]) => ({ route, name, minimum: schema.minimum!, maximum: schema.maximum! }));
  });

const EVENTS = "/api/crm/v1/events";
const EVENT = { name: "Ranges", startsAt: "2027-01-10T09:00:00Z" };

/** A request to the operation with this query: path parameters naming nothing, a valid body. */
function request(route: RouteEntry, query: string) {
  const params = Object.fromEntries([...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map(([, name]) => [name, "none"]));
  const payload = route.body ? EVENT : undefined;
  return [route.method, `${buildPath(route.path, params)}?${query}`, payload] as const;
}

describe("whole-number query parameters", () => {
  let server: TestServer;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    server = await startTestServer();
    call = caller(server.app, await loginToken(server.app, server.admin.userName, server.admin.password));
  });
  afterAll(async () => server?.close());

  it("are found in the contract: the page sizes, the page, and SCIM's startindex and count, each with its range", () => {
    const page = `1..${QUERY_INTEGER_LIMIT}`;
    const any = `-${QUERY_INTEGER_LIMIT}..${QUERY_INTEGER_LIMIT}`;
    expect(PARAMETERS.map(({ route, name, minimum, maximum }) => `${route.id} ${name} ${minimum}..${maximum}`)).toEqual(
      [
        `events.list page ${page}`,
        "events.list pagesize 1..100",
        `events.get page ${page}`,
        "events.get pagesize 1..100",
        `events.create page ${page}`,
        "events.create pagesize 1..100",
        `events.update page ${page}`,
        "events.update pagesize 1..100",
        `events.delete page ${page}`,
        "events.delete pagesize 1..100",
        // SCIM clamps these rather than refusing them: the range is only the nine digits of the wire
        `resources.list startindex ${any}`,
        `resources.list count ${any}`,
        `resources.get startindex ${any}`,
        `resources.get count ${any}`,
        "audit.list pagesize 1..500",
      ],
    );
  });

  it.each(PARAMETERS)("$route.id refuses $name outside its range, in the schema's words", async (parameter) => {
    const { route, name, minimum, maximum } = parameter;
    const cases = [
      [minimum - 1, `must be at least ${minimum}`],
      [maximum + 1, `must be at most ${maximum}`],
    ] as const;
    for (const [value, message] of cases) {
      const problem = problemOf(await call(...request(route, `${name}=${value}`)), 400, "validation_failed");
      expect(problem.errors).toEqual([{ path: `/query/${name}`, message }]);
      expect(problem.detail).toBe(`The request is not valid: /query/${name}: ${message}`);
    }
  });

  it.each(PARAMETERS)("$route.id takes $name at both ends of its range", async ({ route, name, minimum, maximum }) => {
    for (const value of [minimum, maximum]) {
      const response = await call(...request(route, `${name}=${value}`));
      // the single-item operations name no record: 404, after the query was taken; a create 201
      expect([200, 201, 404], `${name}=${value}: ${response.body}`).toContain(response.statusCode);
    }
  });

  it.each(["1e3", "+5", "0x10", "1.0", "", " 5", "5 ", "abc", "-"])(
    "refuses pagesize=%j as not a whole number",
    async (value) => {
      const problem = problemOf(
        await call("GET", `${EVENTS}?pagesize=${encodeURIComponent(value)}`),
        400,
        "validation_failed",
      );
      expect(problem.errors).toEqual([{ path: "/query/pagesize", message: "must be integer" }]);
    },
  );

  it("reads leading zeros as the number they write", async () => {
    const response = await call("GET", `${EVENTS}?pagesize=0007&page=02`);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ page: 2, pagesize: 7 });
  });

  it.each([
    ["GET", `${EVENTS}?pageSize=3&Page=1`, { page: 1, pagesize: 3 }],
    ["GET", `${EVENTS}?PAGESIZE=4`, { pagesize: 4 }],
    ["GET", "/audit?pageSize=2", { pagesize: 2 }],
  ] as const)(
    "%s %s: the events' and the audit's parameter names are read in any case",
    async (method, path, shape) => {
      const response = await call(method, path);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toMatchObject(shape);
    },
  );

  it("refuses a parameter given twice in two spellings as it refuses one given twice", async () => {
    const response = await call("GET", `${EVENTS}?pagesize=3&pageSize=4`);
    expect(response.statusCode, response.body).toBe(400);
  });

  it("answers SCIM paging out of range with the range clamped, not refused", async () => {
    const response = await call("GET", `/Resources?startindex=-${QUERY_INTEGER_LIMIT}&count=${QUERY_INTEGER_LIMIT}`);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ startIndex: 1 });
    expect((await call("GET", "/Resources?count=-3")).json()).toMatchObject({ itemsPerPage: 0 });
  });

  it.each([
    ["POST", EVENTS, "filter=name%20pr", "/query/filter"],
    ["GET", `${EVENTS}/none`, "filter=name%20pr", "/query/filter"],
    ["GET", `${EVENTS}/none`, "cursor=abc", "/query/cursor"],
    ["DELETE", `${EVENTS}/none`, "filter=name%20pr", "/query/filter"],
    ["GET", "/Resources/none", "cursor=abc", "/query/cursor"],
  ] as const)("%s %s takes only its own parameters: %s is refused", async (method, path, query, at) => {
    const payload = method === "POST" ? EVENT : undefined;
    const problem = problemOf(await call(method, `${path}?${query}`, payload), 400, "validation_failed");
    expect(problem.errors).toEqual([{ path: at, message: `unknown field '${at.slice("/query/".length)}'` }]);
  });

  it.each([
    ["POST", EVENTS, "order=-name&page=2&pagesize=5", 201],
    ["POST", EVENTS, "pagesize=101", 400],
    ["GET", "/Resources/none", "sortby=userName&sortorder=descending&startindex=2&count=5", 404],
    ["GET", "/Resources/none", "sortorder=sideways", 400],
  ] as const)(
    "%s %s checks and ignores the list's parameters (spec 1.3, 1.4): %s answers %i",
    async (method, path, query, status) => {
      const payload = method === "POST" ? { ...EVENT, code: `Q-${status}` } : undefined;
      const response = await call(method, `${path}?${query}`, payload);
      expect(response.statusCode, response.body).toBe(status);
    },
  );

  it("shows each range in /openapi.json", async () => {
    const document = (await call("GET", "/openapi.json")).json() as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string; schema: IntegerSchema }[] }>>;
    };
    for (const { route, name, minimum, maximum } of PARAMETERS) {
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
      const parameter = document.paths[path]?.[route.method.toLowerCase()]?.parameters?.find(
        (p) => p.in === "query" && p.name === name,
      );
      expect(parameter?.schema, `${route.id} ${name}`).toMatchObject({ type: "integer", minimum, maximum });
    }
  });
});
