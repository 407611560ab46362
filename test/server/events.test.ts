import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN_USER, createEvent, problemOf, useTestServer } from "../helpers/server.js";

const EVENTS = "/api/crm/v1/events";

interface EventBody {
  code: string;
  name?: string;
  [key: string]: unknown;
}

interface PageBody {
  data: EventBody[];
  page: number;
  pagesize: number;
  total: number;
  totalPages: number;
}

describe("events: create, read, replace, delete", () => {
  const server = useTestServer();
  const call = server.call;
  const create = (payload: object) => call("POST", EVENTS, payload);
  const get = (code: string) => call("GET", `${EVENTS}/${code}`);
  const put = (code: string, payload: object, headers: Record<string, string> = {}) =>
    call("PUT", `${EVENTS}/${code}`, payload, headers);
  const del = (code: string, headers: Record<string, string> = {}) =>
    call("DELETE", `${EVENTS}/${code}`, undefined, headers);

  /** every row of the table, straight from the database */
  const rows = () => server.app.services.store.db.selectFrom("events").selectAll().orderBy("code_key").execute();

  it("creates an event: 201 with Location, ETag and the stored representation", async () => {
    const sent = {
      code: "Conf-2027",
      name: "Annual conference",
      type: "conference",
      startsAt: "2027-05-04T09:00:00+02:00",
      endsAt: "2027-05-04T18:00:00+02:00",
      location: "Lyon",
      attendees: [{ name: "Ann", email: "ann@example.com", status: "accepted" }],
      tags: ["big", "yearly"],
      customFields: { budget: 12000 },
    };
    const response = await create(sent);
    expect(response.statusCode).toBe(201);
    expect(response.headers.location).toBe(`${EVENTS}/Conf-2027`);
    expect(response.headers.etag).toMatch(/^"[^"]+"$/);
    const body = response.json();
    // the times in UTC, the rest as sent
    expect(body).toMatchObject({
      ...sent,
      startsAt: "2027-05-04T07:00:00Z",
      endsAt: "2027-05-04T16:00:00Z",
      createdBy: ADMIN_USER,
      version: 1,
    });
    expect(Date.parse(body.createdAt)).not.toBeNaN();
    expect(body.updatedAt).toBe(body.createdAt);
    // the Location resolves to the same event
    const located = await call("GET", String(response.headers.location));
    expect(located.statusCode).toBe(200);
    expect(located.json()).toEqual(body);
  });

  it("generates a code when none is given", async () => {
    const response = await create({ name: "No code", startsAt: "2027-06-01T10:00:00Z" });
    expect(response.statusCode).toBe(201);
    const { code } = response.json();
    expect(code).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
    expect(response.headers.location).toBe(`${EVENTS}/${code}`);
  });

  it("answers 409 conflict for a code that exists in another case, and keeps the original", async () => {
    expect((await create({ code: "Dup-1", name: "Original", startsAt: "2027-01-01T10:00:00Z" })).statusCode).toBe(201);
    const before = await rows();
    problemOf(await create({ code: "dUP-1", name: "Copy", startsAt: "2027-02-01T10:00:00Z" }), 409, "conflict");
    problemOf(await create({ code: "Dup-1", name: "Copy", startsAt: "2027-02-01T10:00:00Z" }), 409, "conflict");
    expect(await rows()).toEqual(before);
    expect((await get("dup-1")).json()).toMatchObject({ code: "Dup-1", name: "Original" });
  });

  it("reads an event with 200 and an ETag equal to the one returned at creation; any case of the code works", async () => {
    const created = await create({ code: "Read-Me", name: "Readable", startsAt: "2027-01-02T10:00:00Z" });
    const response = await get("Read-Me");
    expect(response.statusCode).toBe(200);
    expect(response.headers.etag).toBe(created.headers.etag);
    expect(response.json()).toEqual(created.json());
    const lower = await get("read-me");
    expect(lower.statusCode).toBe(200);
    expect(lower.json().code).toBe("Read-Me");
  });

  it("answers 404 not_found for an unknown code", async () => {
    problemOf(await get("no-such-event"), 404, "not_found");
    problemOf(await put("no-such-event", { name: "x", startsAt: "2027-01-01T00:00:00Z" }), 404, "not_found");
    problemOf(await del("no-such-event"), 404, "not_found");
  });

  it("shapes a single event with fields and validates the list parameters there too", async () => {
    await create({ code: "Shaped", name: "Shaped", type: "call", startsAt: "2027-01-03T10:00:00Z" });
    const response = await get("Shaped?fields=type");
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ code: "Shaped", type: "call" });
    const ignored = await get("Shaped?page=3&pagesize=5&order=-name");
    expect(ignored.statusCode).toBe(200);
    problemOf(await get("Shaped?pagesize=1000"), 400, "validation_failed");
  });

  it("replaces the whole event on PUT: an omitted optional field is cleared, read-only ones kept", async () => {
    const created = await create({
      code: "Replace-Me",
      name: "Before",
      description: "will disappear",
      location: "Room 1",
      tags: ["a"],
      startsAt: "2027-03-01T10:00:00Z",
    });
    const original = created.json();
    const response = await put("Replace-Me", { name: "After", startsAt: "2027-03-02T10:00:00Z" });
    expect(response.statusCode).toBe(200);
    expect(response.headers.etag).toMatch(/^"[^"]+"$/);
    expect(response.headers.etag).not.toBe(created.headers.etag);
    const body = response.json();
    expect(body).toMatchObject({ code: "Replace-Me", name: "After", startsAt: "2027-03-02T10:00:00Z", version: 2 });
    expect(body).not.toHaveProperty("description");
    expect(body).not.toHaveProperty("location");
    expect(body).not.toHaveProperty("tags");
    expect(body.createdAt).toBe(original.createdAt);
    expect(body.createdBy).toBe(original.createdBy);
    const read = await get("Replace-Me");
    expect(read.json()).toEqual(body);
    expect(read.headers.etag).toBe(response.headers.etag);
  });

  it("ignores read-only fields in a PUT body", async () => {
    const created = await create({ code: "RO", name: "ro", startsAt: "2027-03-01T10:00:00Z" });
    const response = await put("RO", {
      name: "ro2",
      startsAt: "2027-03-01T10:00:00Z",
      version: 99,
      createdBy: "mallory",
      createdAt: "2000-01-01T00:00:00Z",
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ version: 2, createdBy: ADMIN_USER, createdAt: created.json().createdAt });
  });

  it("refuses a PUT whose If-Match does not match with 412 precondition_failed and changes nothing", async () => {
    const created = await create({ code: "Guarded", name: "Guarded", startsAt: "2027-03-01T10:00:00Z" });
    const before = await rows();
    const response = await put(
      "Guarded",
      { name: "Overwritten", startsAt: "2027-03-01T10:00:00Z" },
      { "if-match": '"999"' },
    );
    problemOf(response, 412, "precondition_failed");
    expect(await rows()).toEqual(before);
    const read = await get("Guarded");
    expect(read.headers.etag).toBe(created.headers.etag);
    expect(read.json().name).toBe("Guarded");
  });

  it("accepts a PUT whose If-Match matches and returns a new ETag, which the next PUT must use", async () => {
    const created = await create({ code: "Matched", name: "v1", startsAt: "2027-03-01T10:00:00Z" });
    const etag1 = String(created.headers.etag);
    const second = await put("Matched", { name: "v2", startsAt: "2027-03-01T10:00:00Z" }, { "if-match": etag1 });
    expect(second.statusCode).toBe(200);
    const etag2 = String(second.headers.etag);
    expect(etag2).not.toBe(etag1);
    expect(second.json().name).toBe("v2");
    // the old ETag is now stale
    problemOf(
      await put("Matched", { name: "v3", startsAt: "2027-03-01T10:00:00Z" }, { "if-match": etag1 }),
      412,
      "precondition_failed",
    );
    const third = await put("Matched", { name: "v3", startsAt: "2027-03-01T10:00:00Z" }, { "if-match": etag2 });
    expect(third.statusCode).toBe(200);
    expect((await get("Matched")).json().name).toBe("v3");
  });

  it("refuses a PUT whose body code differs from the path with 400, and accepts the same code in another case", async () => {
    await create({ code: "Path-Code", name: "pc", startsAt: "2027-03-01T10:00:00Z" });
    const before = await rows();
    const response = await put("Path-Code", { code: "Other-Code", name: "pc2", startsAt: "2027-03-01T10:00:00Z" });
    expect(problemOf(response, 400, "validation_failed").errors).toContainEqual(
      expect.objectContaining({ path: "/code" }),
    );
    expect(await rows()).toEqual(before);
    const same = await put("Path-Code", { code: "path-code", name: "pc2", startsAt: "2027-03-01T10:00:00Z" });
    expect(same.statusCode).toBe(200);
    expect(same.json().code).toBe("Path-Code");
  });

  it("deletes with If-Match: 412 on a mismatch, then 204, then GET 404", async () => {
    const created = await create({ code: "Doomed", name: "Doomed", startsAt: "2027-03-01T10:00:00Z" });
    const before = await rows();
    problemOf(await del("Doomed", { "if-match": '"41"' }), 412, "precondition_failed");
    expect(await rows()).toEqual(before);
    expect((await get("Doomed")).statusCode).toBe(200);
    const gone = await del("Doomed", { "if-match": String(created.headers.etag) });
    expect(gone.statusCode).toBe(204);
    expect(gone.body).toBe("");
    problemOf(await get("Doomed"), 404, "not_found");
    problemOf(await del("Doomed"), 404, "not_found");
  });

  it("deletes without If-Match too", async () => {
    await create({ code: "Doomed-2", name: "Doomed", startsAt: "2027-03-01T10:00:00Z" });
    expect((await del("doomed-2")).statusCode).toBe(204);
    problemOf(await get("Doomed-2"), 404, "not_found");
  });
});

describe("events: listing", () => {
  const server = useTestServer();
  // seven events; two share a start so that the code breaks the tie
  const SEED = [
    { code: "E5", name: "Echo", startsAt: "2027-01-05T10:00:00Z", type: "call" },
    { code: "E1", name: "Alpha", startsAt: "2027-01-01T10:00:00Z", type: "meeting" },
    { code: "E3b", name: "Charlie", startsAt: "2027-01-03T10:00:00Z", type: "webinar" },
    { code: "E3a", name: "Delta", startsAt: "2027-01-03T10:00:00Z", type: "webinar" },
    { code: "E7", name: "Bravo", startsAt: "2027-01-07T10:00:00Z" },
    { code: "E2", name: "Foxtrot", startsAt: "2027-01-02T10:00:00Z", type: "visit" },
    { code: "E6", name: "Alpha", startsAt: "2027-01-07T10:00:00Z", type: "call" },
  ];
  beforeAll(async () => {
    for (const event of SEED) await createEvent(server.call, event);
  });

  const list = (query = "") => server.call("GET", `${EVENTS}${query}`);
  const codes = (body: PageBody) => body.data.map((e) => e.code);

  it("lists in the default order startsAt then code, with the page metadata", async () => {
    const response = await list();
    expect(response.statusCode).toBe(200);
    const body = response.json() as PageBody;
    expect(codes(body)).toEqual(["E1", "E2", "E3a", "E3b", "E5", "E6", "E7"]);
    expect(body).toMatchObject({ page: 1, pagesize: 20, total: 7, totalPages: 1 });
    expect(body.data[0]).toMatchObject({ code: "E1", name: "Alpha", type: "meeting", version: 1 });
  });

  it("orders by -startsAt,name", async () => {
    const body = (await list("?order=-startsAt,name")).json() as PageBody;
    // E6 (Alpha) and E7 (Bravo) share the latest start: name breaks the tie
    expect(codes(body)).toEqual(["E6", "E7", "E5", "E3b", "E3a", "E2", "E1"]);
  });

  it("orders by name then -code", async () => {
    const body = (await list("?order=name,-code")).json() as PageBody;
    expect(codes(body)).toEqual(["E6", "E1", "E7", "E3b", "E3a", "E5", "E2"]);
  });

  it.each([
    ["an unknown field", "order=nosuchfield"],
    ["a field that is not sortable", "order=tags"],
    ["a repeated field", "order=name,-name"],
  ])("refuses an order with %s as 400 validation_failed", async (_label, query) => {
    const problem = problemOf(await list(`?${query}`), 400, "validation_failed");
    expect(problem.errors).toContainEqual(expect.objectContaining({ path: "/query/order" }));
  });

  it("pages with page and pagesize, and reports totalPages", async () => {
    const page2 = (await list("?pagesize=3&page=2")).json() as PageBody;
    expect(codes(page2)).toEqual(["E3b", "E5", "E6"]);
    expect(page2).toMatchObject({ page: 2, pagesize: 3, total: 7, totalPages: 3 });
    const page3 = (await list("?pagesize=3&page=3")).json() as PageBody;
    expect(codes(page3)).toEqual(["E7"]);
    const beyond = await list("?pagesize=3&page=9");
    expect(beyond.statusCode).toBe(200);
    expect(beyond.json()).toMatchObject({ data: [], page: 9, total: 7, totalPages: 3 });
    // the pages together are the whole list, without overlap
    const all: string[] = [];
    for (let page = 1; page <= 4; page++) all.push(...codes((await list(`?pagesize=2&page=${page}`)).json()));
    expect(all).toEqual(["E1", "E2", "E3a", "E3b", "E5", "E6", "E7"]);
  });

  it.each([
    "pagesize=0",
    "pagesize=101",
    "pagesize=abc",
    "pagesize=1e3",
    "pagesize=-5",
    "pagesize=2.5",
    "pagesize=",
    "page=0",
    "page=abc",
    "page=1e3",
  ])("refuses %s as 400 validation_failed", async (query) => {
    const problem = problemOf(await list(`?${query}`), 400, "validation_failed");
    const name = query.split("=")[0];
    expect(problem.errors?.some((e) => e.path.startsWith(`/query/${name}`))).toBe(true);
  });

  it("accepts pagesize=100", async () => {
    const response = await list("?pagesize=100");
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ pagesize: 100, totalPages: 1 });
  });

  it("returns only code and the chosen fields with fields=", async () => {
    const body = (await list("?fields=name")).json() as PageBody;
    expect(body.data).toHaveLength(7);
    for (const event of body.data) expect(Object.keys(event).sort()).toEqual(["code", "name"]);
    const two = (await list("?fields=type,startsAt&pagesize=1")).json() as PageBody;
    expect(two.data).toEqual([{ code: "E1", type: "meeting", startsAt: "2027-01-01T10:00:00Z" }]);
  });

  it("refuses fields=nosuch as 400 validation_failed", async () => {
    const problem = problemOf(await list("?fields=name,nosuch"), 400, "validation_failed");
    expect(problem.errors).toContainEqual(expect.objectContaining({ path: "/query/fields" }));
    expect(problem.detail).toContain("nosuch");
  });

  it("refuses an unknown query parameter as 400 validation_failed", async () => {
    problemOf(await list("?sort=name"), 400, "validation_failed");
  });

  it("sends a Link header with first, prev, next and last on a middle page, keeping the other parameters", async () => {
    const response = await list("?pagesize=2&page=2&order=-startsAt");
    expect(response.statusCode).toBe(200);
    const links = parseLinks(String(response.headers.link));
    expect(Object.keys(links).sort()).toEqual(["first", "last", "next", "prev"]);
    const pageOf = (rel: string) => new URL(links[rel]!, "http://x").searchParams;
    expect(pageOf("first").get("page")).toBe("1");
    expect(pageOf("prev").get("page")).toBe("1");
    expect(pageOf("next").get("page")).toBe("3");
    expect(pageOf("last").get("page")).toBe("4");
    for (const rel of Object.keys(links)) {
      expect(new URL(links[rel]!, "http://x").pathname).toBe(EVENTS);
      expect(pageOf(rel).get("pagesize")).toBe("2");
      expect(pageOf(rel).get("order")).toBe("-startsAt");
    }
    // following next gives the next page
    const next = await server.call("GET", links.next!);
    expect(next.json().page).toBe(3);
  });

  it("has no prev on the first page and no next on the last", async () => {
    const first = parseLinks(String((await list("?pagesize=3")).headers.link));
    expect(Object.keys(first).sort()).toEqual(["first", "last", "next"]);
    const last = parseLinks(String((await list("?pagesize=3&page=3")).headers.link));
    expect(Object.keys(last).sort()).toEqual(["first", "last", "prev"]);
  });

  it("refuses the list without a token", async () => {
    problemOf(await server.app.inject({ method: "GET", url: EVENTS }), 401, "token_missing");
  });
});

/** RFC 8288 `<uri>; rel="x", ...` → { x: uri } */
function parseLinks(header: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of header.split(/,\s*(?=<)/)) {
    const match = /^<([^>]*)>\s*;\s*rel="([^"]+)"$/.exec(part.trim());
    if (!match) throw new Error(`bad Link part: ${part}`);
    out[match[2]!] = match[1]!;
  }
  return out;
}
