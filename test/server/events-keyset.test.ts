// Keyset pages of the events list: the Link `next` cursor, on SQLite and on PostgreSQL.
import { CompiledQuery, sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import type { EVENT_SORTABLE_FIELDS } from "../../src/contract/events.js";
import { parseListQuery } from "../../src/server/services/events.js";
import { listEventsQueries } from "../../src/server/store/events-repo.js";
import { STORES } from "../helpers/postgres.js";
import { createEvent, problemOf, useTestServer } from "../helpers/server.js";

const EVENTS = "/api/crm/v1/events";
const TYPES = ["webinar", "Webinar", "call", null];

/** 23 events: four per start time (ties), every fourth without a type, some without an end */
const SEED = Array.from({ length: 23 }, (_, i) => ({
  code: `K-${String((i * 7) % 23).padStart(2, "0")}`,
  name: `Event ${i % 5}`,
  startsAt: `2027-03-${String(1 + Math.floor(i / 4)).padStart(2, "0")}T10:00:00Z`,
  ...(TYPES[i % 4] && { type: TYPES[i % 4] }),
  ...(i % 3 === 0 && { endsAt: "2027-04-01T10:00:00Z" }),
}));

interface Page {
  data: { code: string }[];
  page: number;
  pagesize: number;
  total?: number;
  totalPages?: number;
}

const nextOf = (link: string) => /<([^>]*)>; rel="next"/.exec(link)?.[1];

describe.each(STORES)("events list cursor pages (%s)", (_store, start) => {
  const server = useTestServer({}, start);
  const call = server.call;
  beforeAll(async () => {
    for (const event of SEED) await createEvent(call, event);
  });

  const get = (url: string) => call("GET", url);

  /** follows next from the first page; every page's codes */
  async function walk(query: string): Promise<string[][]> {
    const pages: string[][] = [];
    let url: string | undefined = `${EVENTS}?${query}`;
    while (url) {
      const response = await get(url);
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json() as Page;
      pages.push(body.data.map((e) => e.code));
      if (pages.length > 1) {
        // a cursor page: numbered, without the total it would have to count
        expect(body.page).toBe(pages.length);
        expect(body).not.toHaveProperty("total");
        expect(body).not.toHaveProperty("totalPages");
        expect(new URL(url, "http://x").searchParams.get("cursor")).toBeTruthy();
      }
      url = nextOf(String(response.headers.link));
      if (pages.length > 30) throw new Error("the cursor does not advance");
    }
    return pages;
  }

  it.each([
    ["the default order", ""],
    ["-startsAt (ties on startsAt, code descending)", "order=-startsAt"],
    ["type, NULLs last", "order=type"],
    ["-type,-startsAt, NULLs first", "order=-type,-startsAt"],
    ["endsAt,-name, mostly NULL", "order=endsAt,-name"],
    ["-endsAt, NULLs first, then the values", "order=-endsAt"],
    ["-allDay, every key NULL", "order=-allDay"],
    ["name,-code", "order=name,-code"],
    ["a type filter", `filter=${encodeURIComponent('type eq "webinar"')}`],
    ["a filter and -startsAt", `filter=${encodeURIComponent('type ne "call"')}&order=-startsAt`],
  ])("walks every event exactly once, in order, with %s", async (_label, query) => {
    const whole = (await get(`${EVENTS}?pagesize=100${query ? `&${query}` : ""}`)).json() as Page;
    const pages = await walk(`pagesize=3${query ? `&${query}` : ""}`);
    expect(pages.flat()).toEqual(whole.data.map((e) => e.code));
    expect(pages.length).toBe(Math.max(1, Math.ceil(whole.data.length / 3)));
    expect(pages.slice(0, -1).every((p) => p.length === 3)).toBe(true);
  });

  it("keeps page, prev and the other parameters in the links of a cursor page; no last", async () => {
    const first = await get(`${EVENTS}?pagesize=5&order=-startsAt`);
    const second = await get(nextOf(String(first.headers.link))!);
    const links = String(second.headers.link);
    expect(links).not.toContain('rel="last"');
    const prev = /<([^>]*)>; rel="prev"/.exec(links)?.[1];
    expect(new URL(prev!, "http://x").searchParams.get("page")).toBe("1");
    const next = new URL(nextOf(links)!, "http://x").searchParams;
    expect([next.get("page"), next.get("pagesize"), next.get("order")]).toEqual(["3", "5", "-startsAt"]);
  });

  it.each([
    ["another order", "&order=name"],
    ["another filter", `&filter=${encodeURIComponent('type eq "call"')}`],
    ["another pagesize", "&pagesize=4"],
    ["a page other than its own", "&page=7"],
  ])("refuses a cursor with %s as 400 validation_failed", async (_label, change) => {
    const first = await get(`${EVENTS}?pagesize=3`);
    const cursor = new URL(nextOf(String(first.headers.link))!, "http://x").searchParams.get("cursor")!;
    const query = `cursor=${cursor}${change.includes("pagesize") ? "" : "&pagesize=3"}${change}`;
    const problem = problemOf(await get(`${EVENTS}?${query}`), 400, "validation_failed");
    expect(problem.errors?.[0]?.path).toMatch(/^\/query\/(cursor|page)$/);
  });

  it.each([
    ["not base64url", "!!!"],
    ["not JSON", Buffer.from("hello").toString("base64url")],
    ["the wrong number of keys", Buffer.from(JSON.stringify({ q: "x", p: 2, k: ["a"] })).toString("base64url")],
    ["an object as a key", Buffer.from(JSON.stringify({ q: "x", p: 2, k: [{}, "a"] })).toString("base64url")],
    ["page 1", Buffer.from(JSON.stringify({ q: "x", p: 1, k: ["a", "b"] })).toString("base64url")],
  ])("refuses a tampered cursor (%s) as 400 validation_failed", async (_label, cursor) => {
    const problem = problemOf(await get(`${EVENTS}?cursor=${cursor}`), 400, "validation_failed");
    expect(problem.errors).toContainEqual(expect.objectContaining({ path: "/query/cursor" }));
  });

  // a text field's bound edited to a number, the flag's to anything but 0 or 1, a NOT NULL one's to null
  const WRONG_TYPE: Record<(typeof EVENT_SORTABLE_FIELDS)[number], unknown[]> = {
    code: [5, 0.5, 1e300, null, true],
    name: [5, 1e300, null, false],
    type: [5, 0.5, 1e300, true],
    startsAt: [5, 1e300, null, true],
    endsAt: [5, 1e300, true],
    allDay: ["true", "x", 0.5, 1e300, -1, 2, true],
    location: [5, 1e300, true],
    organizer: [5, 1e300, true],
    createdAt: [5, 1e300, null, true],
    updatedAt: [5, 1e300, null, true],
    createdBy: [5, 1e300, true],
  };
  it.each(
    Object.entries(WRONG_TYPE).flatMap(([field, values]) =>
      ["", "-"].flatMap((sign) => values.map((value) => [`${sign}${field}`, value] as const)),
    ),
  )("refuses a cursor in order %s whose key was edited to %j as 400 validation_failed", async (order, value) => {
    const query = `${EVENTS}?pagesize=3&order=${order}`;
    const first = await get(query);
    const cursor = new URL(nextOf(String(first.headers.link))!, "http://x").searchParams.get("cursor")!;
    const decoded = JSON.parse(Buffer.from(cursor, "base64url").toString()) as { k: unknown[] };
    decoded.k[0] = value;
    const edited = Buffer.from(JSON.stringify(decoded)).toString("base64url");
    const problem = problemOf(await get(`${query}&cursor=${edited}`), 400, "validation_failed");
    expect(problem.errors).toContainEqual(expect.objectContaining({ path: "/query/cursor" }));
  });

  it("refuses a cursor whose tie-breaking code was edited to a number", async () => {
    const first = await get(`${EVENTS}?pagesize=3&order=allDay`);
    const cursor = new URL(nextOf(String(first.headers.link))!, "http://x").searchParams.get("cursor")!;
    const decoded = JSON.parse(Buffer.from(cursor, "base64url").toString()) as { k: unknown[] };
    decoded.k[1] = 1e300;
    const edited = Buffer.from(JSON.stringify(decoded)).toString("base64url");
    problemOf(await get(`${EVENTS}?pagesize=3&order=allDay&cursor=${edited}`), 400, "validation_failed");
  });

  it("refuses a cursor whose digest was edited to fit", async () => {
    const first = await get(`${EVENTS}?pagesize=3`);
    const cursor = new URL(nextOf(String(first.headers.link))!, "http://x").searchParams.get("cursor")!;
    const decoded = JSON.parse(Buffer.from(cursor, "base64url").toString());
    const edited = Buffer.from(JSON.stringify({ ...decoded, q: "AAAAAAAAAAAAAAAA" })).toString("base64url");
    problemOf(await get(`${EVENTS}?pagesize=3&cursor=${edited}`), 400, "validation_failed");
  });

  it("counts the unfiltered total from the trigger-kept count, exact after creates and deletes", async () => {
    const total = async () => ((await get(EVENTS)).json() as Page).total;
    expect(await total()).toBe(SEED.length);
    const created = await call("POST", EVENTS, { code: "K-extra", name: "x", startsAt: "2027-05-01T00:00:00Z" });
    expect(await total()).toBe(SEED.length + 1);
    const deleted = await call("DELETE", `${EVENTS}/K-extra`, undefined, { "if-match": String(created.headers.etag) });
    expect(deleted.statusCode).toBe(204);
    expect(await total()).toBe(SEED.length);
  });

  it("counts a type filter's total from the trigger-kept count of each type, exact through creates, retypes and deletes", async () => {
    const filtered = async (type: string) =>
      ((await get(`${EVENTS}?filter=${encodeURIComponent(`type eq "${type}"`)}`)).json() as Page).total;
    // the same matches counted over the events themselves (a filter the per-type count does not serve)
    const scanned = async (type: string) =>
      ((await get(`${EVENTS}?filter=${encodeURIComponent(`type eq "${type}" and code pr`)}`)).json() as Page).total;
    const put = async (code: string, type: string | null) => {
      const current = await get(`${EVENTS}/${code}`);
      const { createdAt, updatedAt, createdBy, version, ...mutable } = current.json() as Record<string, unknown>;
      const response = await call(
        "PUT",
        `${EVENTS}/${code}`,
        { ...mutable, type },
        {
          "if-match": String(current.headers.etag),
        },
      );
      expect(response.statusCode, response.body).toBe(200);
    };
    const seeded = SEED.filter((e) => e.type?.toLowerCase() === "webinar").length;
    const steps: [string, () => Promise<unknown>, Record<string, number>][] = [
      ["as seeded", async () => {}, { webinar: seeded, WEBINAR: seeded, call: 6, meeting: 0 }],
      [
        "a create",
        () => call("POST", EVENTS, { code: "T-1", name: "x", startsAt: "2027-05-01T00:00:00Z", type: "WEBINAR" }),
        { webinar: seeded + 1, call: 6 },
      ],
      ["a retype", () => put("T-1", "Meeting"), { webinar: seeded, meeting: 1 }],
      ["a change of case only", () => put("T-1", "meeting"), { meeting: 1 }],
      ["a type removed", () => put("T-1", null), { meeting: 0, webinar: seeded }],
      ["a type given", () => put("T-1", "call"), { call: 7 }],
      [
        "a delete",
        async () => {
          const current = await get(`${EVENTS}/T-1`);
          await call("DELETE", `${EVENTS}/T-1`, undefined, { "if-match": String(current.headers.etag) });
        },
        { call: 6, webinar: seeded },
      ],
    ];
    for (const [label, step, totals] of steps) {
      await step();
      for (const [type, expected] of Object.entries(totals)) {
        expect([label, type, await filtered(type)]).toEqual([label, type, expected]);
        expect([label, type, await scanned(type)]).toEqual([label, type, expected]);
      }
    }
  });

  /**
   * The plans of a cursor page's statements in this order and filter (one per range of the index
   * the rows after the cursor lie in), after a row whose leading key is `lead`
   */
  async function plans(query: { order?: string; filter?: string }, lead: "value" | "null"): Promise<string[]> {
    const { db, dialect } = server.app.services.store;
    const { sort, where } = parseListQuery(query, dialect);
    const after = sort.map((key, i) =>
      i === 0 && lead === "null"
        ? null
        : key.column === "starts_at"
          ? "2027-03-03T10:00:00.000Z"
          : key.column === "all_day"
            ? 0
            : "k-05",
    );
    return Promise.all(
      listEventsQueries(db, { sort, where, limit: 21, after }).map((query) => explain(query(21).compile())),
    );
  }

  async function explain(compiled: CompiledQuery): Promise<string> {
    const { db, dialect } = server.app.services.store;
    if (dialect === "sqlite") {
      const rows = await db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
      );
      return rows.rows.map((r) => r.detail).join("\n");
    }
    // on a few rows a scan and a sort are cheapest: ask whether an index can serve the order at all
    return db.transaction().execute(async (trx) => {
      for (const setting of ["enable_seqscan", "enable_bitmapscan", "enable_sort"]) {
        await sql`select set_config(${setting}, 'off', true)`.execute(trx);
      }
      const rows = await trx.executeQuery<{ "QUERY PLAN": string }>(
        CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]),
      );
      return rows.rows.map((r) => r["QUERY PLAN"]).join("\n");
    });
  }

  // every field the list sorts by, each way: the code breaks ties in the same direction, so the
  // field's (column, code_key) index serves both
  const SORTED: [string, string][] = [
    ["code", "events_pkey|sqlite_autoindex_events_1"],
    ["name", "events_name_idx"],
    ["type", "events_type_idx"],
    ["startsAt", "events_starts_at_idx"],
    ["endsAt", "events_ends_at_idx"],
    ["allDay", "events_all_day_idx"],
    ["location", "events_location_idx"],
    ["organizer", "events_organizer_idx"],
    ["createdAt", "events_created_at_idx"],
    ["updatedAt", "events_updated_at_idx"],
    ["createdBy", "events_created_by_idx"],
  ];
  const NULLABLE = new Set(["type", "endsAt", "allDay", "location", "organizer", "createdBy"]);
  it.each([
    ["the default order", {}, "events_starts_at_idx", "value"],
    ...SORTED.flatMap(([field, index]): [string, { order: string }, string, "value" | "null"][] => [
      [field, { order: field }, index, "value"],
      [`-${field}`, { order: `-${field}` }, index, "value"],
      // after a row without the field: the NULLs left, then (descending) every value
      ...(NULLABLE.has(field)
        ? ([
            [`${field}, after a NULL`, { order: field }, index, "null"],
            [`-${field}, after a NULL`, { order: `-${field}` }, index, "null"],
          ] as [string, { order: string }, string, "null"][])
        : []),
    ]),
    ["a type filter", { filter: 'type eq "webinar"' }, "events_type_keyset_idx", "value"],
    [
      "a type filter and -startsAt",
      { filter: 'type eq "webinar"', order: "-startsAt" },
      "events_type_keyset_idx",
      "value",
    ],
  ] as [string, { order?: string; filter?: string }, string, "value" | "null"][])(
    "reads a cursor page in %s as ranges of an index, without a scan, a walk from the start or a sort",
    async (_label, query, index, lead) => {
      const statements = await plans(query, lead);
      // the first range seeks to the cursor's row itself, past the ties of its value, by the code too
      expect(statements[0]).toMatch(/SEARCH events USING (COVERING )?INDEX \S+ \(.*code_key|Index Cond: .*code_key/);
      for (const text of statements) {
        expect(text).toMatch(new RegExp(index));
        expect(text).not.toMatch(/SCAN events\b|TEMP B-TREE|Seq Scan|Sort/);
        // a range: SQLite searches the index; PostgreSQL bounds the scan by a condition on it
        expect(text).toMatch(/SEARCH events USING (COVERING )?INDEX \S+ \(|Index Cond/);
      }
    },
  );
});
