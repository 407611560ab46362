/**
 * Text that is not well-formed Unicode is refused where it enters, with a 400 naming where; text
 * that is well-formed, however unusual, is stored and read back exactly. A JSON body that decoded
 * as UTF-8 can still carry a lone UTF-16 surrogate as an escape (`"\ud800x"`), which no database
 * keeps (SQLite stored U+FFFD in its place); a query or a path can carry percent-escapes that do
 * not decode as UTF-8 (`%ED%A0%80` is a surrogate, `%C0%AE` an overlong `.`, `%FF` no UTF-8 at
 * all). Headers reach the app as Latin-1 text and are compared, never decoded further.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../helpers/postgres.js";
import { scimErrorOf } from "../helpers/scim.js";
import { problemOf, useTestServer } from "../helpers/server.js";

const EVENTS = "/api/crm/v1/events";
const STARTS = "2027-05-01T10:00:00Z";
const event = (members: string) => `{"name":"n","startsAt":"${STARTS}",${members}}`;

/** Lone surrogates, as a client's JSON escapes them: high, low, high at the end, a pair reversed. */
const LONE = ["\\ud800x", "\\udc00", "x\\udbff", "\\udfff\\ud800", "a\\ud83d b"];

/** [what, method, url, body with SURROGATE where the text goes, the pointer the answer must name] */
const REFUSED_BODIES: [string, "POST" | "PUT", string, string, string][] = [
  ["an event's name (the reported case)", "POST", EVENTS, `{"name":"SURROGATE","startsAt":"${STARTS}"}`, "/name"],
  ["an event's description", "POST", EVENTS, event(`"description":"SURROGATE"`), "/description"],
  [
    "an attendee's name",
    "POST",
    EVENTS,
    event(`"attendees":[{"name":"SURROGATE","email":"a@example.com"}]`),
    "/attendees/0/name",
  ],
  ["a tag", "POST", EVENTS, event(`"tags":["ok","SURROGATE"]`), "/tags/1"],
  [
    "a customFields value",
    "POST",
    EVENTS,
    event(`"customFields":{"a/b":{"c~d":["SURROGATE"]}}`),
    "/customFields/a~1b/c~0d/0",
  ],
  ["a customFields member name", "POST", EVENTS, event(`"customFields":{"okSURROGATE":1}`), "/customFields"],
  ["a replaced event's location", "PUT", `${EVENTS}/Uni-1`, event(`"location":"SURROGATE"`), "/location"],
  [
    "a batch item",
    "POST",
    `${EVENTS}/batch`,
    `{"items":[${event(`"code":"Uni-ok"`)},{"name":"SURROGATE","startsAt":"${STARTS}"}]}`,
    "/items/1/name",
  ],
  ["a custom resource's attribute", "POST", "/Resources", `{"resourceType":"Uni","label":"SURROGATE"}`, "/label"],
  ["a custom resource's attribute name", "POST", "/Resources", `{"resourceType":"Uni","SURROGATE":1}`, "/"],
  [
    "a User's displayName",
    "POST",
    "/Resources",
    `{"resourceType":"User","userName":"uni.user","displayName":"SURROGATE"}`,
    "/displayName",
  ],
  [
    "a bulk operation's data",
    "POST",
    "/Bulk",
    `{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"Operations":[{"method":"POST","path":"/Resources","bulkId":"b","data":{"resourceType":"Uni","n":"SURROGATE"}}]}`,
    "/Operations/0/data/n",
  ],
];

/** Well-formed text a client may well send: each is stored and read back exactly. */
const KEPT: [string, string][] = [
  ["a surrogate pair as escapes", "\\ud83d\\ude00"],
  ["the same pair as UTF-8", "😀"],
  ["the last code point", "\\udbff\\udfff"],
  ["noncharacters", "\\uffff\\ufffe\\ufdd0"],
  ["a backslash before the text ud800", "\\\\ud800"],
  ["a replacement character", "\\ufffd"],
];

/** Percent-escapes that are not UTF-8 once decoded, in each part of a URL the server reads. */
const BAD_ESCAPES = ["%ED%A0%80", "%C0%AE", "%FF", "%E2%82", "%F4%90%80%80", "%80"];
const BAD_QUERIES: [string, (bad: string) => string, string][] = [
  ["an events filter literal", (b) => `${EVENTS}?filter=name%20eq%20%22${b}%22`, "/query/filter"],
  ["an events filter with + for spaces", (b) => `${EVENTS}?filter=name+eq+%22${b}%22`, "/query/filter"],
  ["an events order", (b) => `${EVENTS}?order=name,${b}`, "/query/order"],
  ["an events fields", (b) => `${EVENTS}?fields=${b}`, "/query/fields"],
  ["a single event's fields", (b) => `${EVENTS}/Uni-1?fields=${b}`, "/query/fields"],
  ["a resources sortby", (b) => `/Resources?sortby=${b}`, "/query/sortby"],
  ["a resources filter", (b) => `/Resources?filter=displayName%20sw%20%22${b}%22`, "/query/filter"],
  ["an audit filter", (b) => `/audit?filter=action%20eq%20%22${b}%22`, "/query/filter"],
  ["a parameter's name", (b) => `${EVENTS}?page=1&${b}=1`, "/query"],
];

describe.each(STORES)("text that is not well-formed Unicode (%s)", (_store, start) => {
  const server = useTestServer({}, start);

  const send = (method: "GET" | "POST" | "PUT", url: string, body?: string, headers: Record<string, string> = {}) =>
    server.call(method, url, body, { ...(body !== undefined && { "content-type": "application/json" }), ...headers });
  const digest = async () =>
    JSON.stringify(
      await Promise.all([
        server.app.services.store.db.selectFrom("events").selectAll().orderBy("code_key").execute(),
        server.app.services.store.db.selectFrom("resources").select(["id", "attributes"]).orderBy("id").execute(),
      ]),
    );

  beforeAll(async () => {
    const created = await send("POST", EVENTS, `{"code":"Uni-1","name":"one","startsAt":"${STARTS}"}`);
    expect(created.statusCode, created.body).toBe(201);
  });

  describe.each(REFUSED_BODIES)("a lone surrogate in %s", (_what, method, url, body, pointer) => {
    it.each(LONE)("%s: 400 validation_failed naming the place, nothing written", async (lone) => {
      const before = await digest();
      const response = await send(method, url, body.replace("SURROGATE", lone));
      // /Bulk is a SCIM endpoint: the same problem, as a SCIM error body
      const problem = url === "/Bulk" ? scimErrorOf(response, 400) : problemOf(response, 400, "validation_failed");
      expect(problem.code).toBe("validation_failed");
      expect(problem.errors?.[0]?.path).toBe(pointer);
      expect(problem.detail).toMatch(/surrogate/i);
      expect(await digest()).toBe(before);
    });
  });

  it("a lone surrogate in a login is refused before any account is looked at", async () => {
    const response = await server.app.inject({
      method: "POST",
      url: "/auth/login",
      headers: { "content-type": "application/json" },
      payload: `{"userName":"\\ud800","password":"x"}`,
    });
    expect(problemOf(response, 400, "validation_failed").errors?.[0]?.path).toBe("/userName");
  });

  describe.each(KEPT)("%s", (_what, text) => {
    it("is stored and read back exactly, in a field and in customFields", async () => {
      const expected = JSON.parse(`"${text}"`) as string;
      const created = await send("POST", EVENTS, event(`"description":"${text}","customFields":{"${text}":"${text}"}`));
      expect(created.statusCode, created.body).toBe(201);
      const back = (await send("GET", String(created.headers.location))).json() as {
        description: string;
        customFields: Record<string, string>;
      };
      expect(back.description).toBe(expected);
      expect(back.customFields).toEqual({ [expected]: expected });
      const resource = await send("POST", "/Resources", `{"resourceType":"Uni","label":"${text}"}`);
      expect(resource.statusCode, resource.body).toBe(201);
      const read = (await send("GET", String(resource.headers.location))).json() as { label: string };
      expect(read.label).toBe(expected);
    });
  });

  describe.each(BAD_QUERIES)("an escape that is not UTF-8 in %s", (_what, url, path) => {
    it.each(BAD_ESCAPES)("%s: 400 validation_failed naming the parameter", async (bad) => {
      const problem = problemOf(await send("GET", url(bad)), 400, "validation_failed");
      expect(problem.errors?.[0]?.path.startsWith(path)).toBe(true);
      expect(problem.detail).toMatch(/UTF-8/);
    });
  });

  it.each([
    ["an escaped é", `${EVENTS}?filter=${encodeURIComponent('name eq "é"')}`],
    ["an escaped percent sign", `${EVENTS}?filter=${encodeURIComponent('name eq "%FF"')}`],
    ["an escaped emoji", `/Resources?filter=${encodeURIComponent('label eq "😀"')}`],
  ])("a query with %s is read as sent", async (_what, url) => {
    const response = await send("GET", url);
    expect(response.statusCode, response.body).toBe(200);
  });

  it.each(BAD_ESCAPES)("an escape that is not UTF-8 in a path parameter (%s): 400 validation_failed", async (bad) => {
    problemOf(await send("GET", `${EVENTS}/${bad}`), 400, "validation_failed");
    problemOf(await send("GET", `/Resources/a${bad}`), 400, "validation_failed");
  });

  it.each(BAD_ESCAPES)(
    "an escape that is not UTF-8 in a bulk operation's path (%s) fails that operation",
    async (bad) => {
      const response = await send(
        "POST",
        "/Bulk",
        `{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"Operations":[{"method":"DELETE","path":"/Resources/${bad}"}]}`,
      );
      expect(response.statusCode, response.body).toBe(200);
      const [operation] = (response.json() as { Operations: { status: string; response: { code: string } }[] })
        .Operations;
      expect(operation?.status).toBe("400");
      expect(operation?.response.code).toBe("validation_failed");
    },
  );

  it.each([
    ["a lone surrogate", "\ud800"],
    ["Latin-1 text", '"\u00e9"'],
  ])("If-Match holding %s is a precondition that fails: 412, nothing written", async (_what, tag) => {
    const before = await digest();
    const response = await send("PUT", `${EVENTS}/Uni-1`, event(`"location":"x"`), { "if-match": tag });
    problemOf(response, 412, "precondition_failed");
    expect(await digest()).toBe(before);
  });
});
