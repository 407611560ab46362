/**
 * Names that every plain object already answers to (`__proto__`, `constructor`, `toString`, ...)
 * are plain names wherever a request names a field, an attribute or a member: a sort key, a
 * `fields` projection, a filter's attribute path, a body's member. They get what any other name
 * gets there, never a 5xx and never another meaning: an unknown field of events or audit records
 * is a 400 naming it; a resource attribute may be called so, and sorts and filters like any other;
 * a body member is stored and read back exactly, or refused with a 400 (`__proto__`, which the
 * JSON parser refuses everywhere).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../helpers/postgres.js";
import { problemOf, useTestServer } from "../helpers/server.js";

const EVENTS = "/api/crm/v1/events";
const STARTS = "2027-03-01T10:00:00Z";

/** What a plain object inherits, read from the runtime, and `prototype`, which functions have. */
const INHERITED = [...Object.getOwnPropertyNames(Object.prototype), "prototype"];
/** A custom resource may hold an attribute of every such name but `__proto__` (see the body table). */
const STORABLE = INHERITED.filter((name) => name !== "__proto__");

const q = encodeURIComponent;

/** Each position of a list query where a name goes, and what the server must answer there. */
const REFUSED: { position: string; url: (name: string) => string; code: string; path: string }[] = [
  { position: "events order", url: (n) => `${EVENTS}?order=${q(n)}`, code: "validation_failed", path: "/query/order" },
  {
    position: "events order, descending, after a valid key",
    url: (n) => `${EVENTS}?order=name,-${q(n)}`,
    code: "validation_failed",
    path: "/query/order",
  },
  {
    position: "events fields",
    url: (n) => `${EVENTS}?fields=name,${q(n)}`,
    code: "validation_failed",
    path: "/query/fields",
  },
  {
    position: "events filter attribute",
    url: (n) => `${EVENTS}?filter=${q(`${n} eq "x"`)}`,
    code: "invalid_filter",
    path: "/query/filter",
  },
  {
    position: "events filter presence",
    url: (n) => `${EVENTS}?filter=${q(`${n} pr`)}`,
    code: "invalid_filter",
    path: "/query/filter",
  },
  {
    position: "events filter in attendees[...]",
    url: (n) => `${EVENTS}?filter=${q(`attendees[${n} eq "x"]`)}`,
    code: "invalid_filter",
    path: "/query/filter",
  },
  {
    position: "audit filter attribute",
    url: (n) => `/audit?filter=${q(`${n} eq "x"`)}`,
    code: "invalid_filter",
    path: "/query/filter",
  },
  {
    position: "audit filter sub-attribute",
    url: (n) => `/audit?filter=${q(`actor.${n} pr`)}`,
    code: "invalid_filter",
    path: "/query/filter",
  },
  {
    position: "single event fields",
    url: (n) => `${EVENTS}/Proto-1?fields=${q(n)}`,
    code: "validation_failed",
    path: "/query/fields",
  },
];

describe.each(STORES)("names every object inherits are plain names (%s)", (_store, start) => {
  const server = useTestServer({}, start);
  const ids = new Map<string, string>();

  const send = (method: "GET" | "POST" | "PUT", url: string, body?: string) =>
    server.call(method, url, body, body === undefined ? {} : { "content-type": "application/json" });

  beforeAll(async () => {
    const created = await send("POST", EVENTS, JSON.stringify({ code: "Proto-1", name: "one", startsAt: STARTS }));
    expect(created.statusCode, created.body).toBe(201);
    // a resource per name holding that attribute ("b"), and one holding it as "a": sorted a, b
    for (const name of STORABLE) {
      for (const value of ["b", "a"]) {
        const body = `{"resourceType":"Inherited","label":${JSON.stringify(`${name}-${value}`)},${JSON.stringify(name)}:"${value}"}`;
        const response = await send("POST", "/Resources", body);
        expect(response.statusCode, response.body).toBe(201);
        ids.set(`${name}-${value}`, (response.json() as { id: string }).id);
      }
    }
  });

  describe.each(REFUSED)("$position", ({ url, code, path }) => {
    it.each(INHERITED)("%s is an unknown name: 400 naming it", async (name) => {
      const problem = problemOf(await send("GET", url(name)), 400, code);
      expect(problem.errors?.[0]?.path).toBe(path);
      expect(problem.detail.toLowerCase()).toContain(name.toLowerCase());
    });
  });

  it.each(INHERITED)("resources sortby=%s sorts by the attribute of that name", async (name) => {
    const response = await send("GET", `/Resources?resourcetypes=Inherited&sortby=${q(name)}`);
    expect(response.statusCode, response.body).toBe(200);
    const labels = (response.json() as { Resources: { label: string }[] }).Resources.map((r) => r.label);
    if (name === "__proto__") expect(labels).toHaveLength(STORABLE.length * 2);
    else expect(labels.slice(0, 2)).toEqual([`${name}-a`, `${name}-b`]);
    const descending = await send("GET", `/Resources?resourcetypes=Inherited&sortby=${q(name)}&sortorder=descending`);
    expect(descending.statusCode, descending.body).toBe(200);
  });

  it.each(INHERITED)("resources filter on %s finds the resources with that attribute", async (name) => {
    for (const filter of [`${name} eq "a"`, `${name} pr`, `not (${name} pr)`, `urn:x:${name} eq "a"`]) {
      const response = await send("GET", `/Resources?resourcetypes=Inherited&filter=${q(filter)}`);
      expect(response.statusCode, `${filter}: ${response.body}`).toBe(200);
      const found = new Set((response.json() as { Resources: { id: string }[] }).Resources.map((r) => r.id));
      const holders =
        name === "__proto__" ? [] : [ids.get(`${name}-a`)!, ...(filter.includes(" pr") ? [ids.get(`${name}-b`)!] : [])];
      if (filter.startsWith("not")) for (const id of holders) expect(found.has(id)).toBe(false);
      else expect([...found].sort()).toEqual(holders.sort());
    }
  });

  it.each(STORABLE)("an event's customFields.%s is filtered like any other member", async (name) => {
    const code = `Cf-${STORABLE.indexOf(name)}`;
    const body = `{"code":"${code}","name":"cf","startsAt":"${STARTS}","customFields":{${JSON.stringify(name)}:"hit"}}`;
    expect((await send("POST", EVENTS, body)).statusCode).toBe(201);
    const response = await send("GET", `${EVENTS}?filter=${q(`customFields.${name} eq "hit"`)}`);
    expect(response.statusCode, response.body).toBe(200);
    expect((response.json() as { data: { code: string }[] }).data.map((e) => e.code)).toEqual([code]);
  });

  /** [what, method, url, body as JSON text, the path of what was stored, or undefined when refused] */
  const BODIES: [string, "POST" | "PUT", string, (name: string) => string, string[] | undefined][] = [
    [
      "an event's customFields member",
      "POST",
      EVENTS,
      (n) => `{"name":"n","startsAt":"${STARTS}","customFields":{${JSON.stringify(n)}:{"a":[1,"two"]}}}`,
      ["customFields"],
    ],
    [
      "an event's own member",
      "POST",
      EVENTS,
      (n) => `{"name":"n","startsAt":"${STARTS}",${JSON.stringify(n)}:1}`,
      undefined,
    ],
    [
      "an attendee's member",
      "POST",
      EVENTS,
      (n) =>
        `{"name":"n","startsAt":"${STARTS}","attendees":[{"name":"a","email":"a@example.com",${JSON.stringify(n)}:"x"}]}`,
      undefined,
    ],
    [
      "a custom resource's attribute",
      "POST",
      "/Resources",
      (n) => `{"resourceType":"Loose",${JSON.stringify(n)}:{"nested":true}}`,
      [],
    ],
    [
      "a custom resource's nested member",
      "POST",
      "/Resources",
      (n) => `{"resourceType":"Loose","outer":{${JSON.stringify(n)}:"x"}}`,
      ["outer"],
    ],
    [
      "a User's attribute",
      "POST",
      "/Resources",
      (n) => `{"resourceType":"User","userName":"u.${Math.random().toString(36).slice(2)}",${JSON.stringify(n)}:"x"}`,
      undefined,
    ],
    [
      "a User's name member",
      "POST",
      "/Resources",
      (n) =>
        `{"resourceType":"User","userName":"u.${Math.random().toString(36).slice(2)}","name":{${JSON.stringify(n)}:"x"}}`,
      undefined,
    ],
  ];

  describe.each(BODIES)("a body key in %s", (_what, method, url, body, stored) => {
    it.each(INHERITED)("%s: stored and read back exactly, or a 400", async (name) => {
      const text = body(name);
      const response = await send(method, url, text);
      if (stored === undefined || name === "__proto__") {
        problemOf(response, 400, "validation_failed");
        return;
      }
      expect(response.statusCode, response.body).toBe(201);
      const sent = JSON.parse(text) as Record<string, unknown>;
      const back = await send("GET", String(response.headers.location));
      const read = JSON.parse(back.body) as Record<string, unknown>;
      // JSON.parse makes own members of every name; compare the stored part member by member
      const at = (value: Record<string, unknown>) =>
        stored.reduce<unknown>((v, key) => (v as Record<string, unknown>)[key], value) as Record<string, unknown>;
      const expected = at(sent);
      const actual = at(read);
      expect(Object.hasOwn(actual, name)).toBe(true);
      expect(JSON.stringify(actual[name])).toBe(JSON.stringify(expected[name]));
    });
  });

  it.each(INHERITED)("a batch item with the member %s fails alone, and in customFields it is stored", async (name) => {
    const text = `{"items":[{"name":"own","startsAt":"${STARTS}",${JSON.stringify(name)}:1},{"name":"cf","startsAt":"${STARTS}","customFields":{${JSON.stringify(name)}:2}}]}`;
    const response = await send("POST", `${EVENTS}/batch`, text);
    if (name === "__proto__") {
      problemOf(response, 400, "validation_failed");
      return;
    }
    expect(response.statusCode, response.body).toBe(200);
    const results = (response.json() as { results: { status: string; code?: string }[] }).results;
    expect(results.map((r) => r.status)).toEqual(["failed", "created"]);
    const back = (await send("GET", `${EVENTS}/${results[1]!.code}`)).json() as {
      customFields: Record<string, unknown>;
    };
    expect(Object.hasOwn(back.customFields, name)).toBe(true);
    expect(back.customFields[name]).toBe(2);
  });

  it("a replacement's audit record weighs an attribute of an inherited name as any other", async () => {
    const members = STORABLE.map((name) => `${JSON.stringify(name)}:null`).join(",");
    const created = await send("POST", "/Resources", `{"resourceType":"Audited","plain":null,${members},"kept":1}`);
    expect(created.statusCode, created.body).toBe(201);
    const id = (created.json() as { id: string }).id;
    // every null member dropped, one member changed: only that one is a change
    const replaced = await send("PUT", `/Resources/${id}`, `{"resourceType":"Audited","kept":2}`);
    expect(replaced.statusCode, replaced.body).toBe(200);
    const audit = await send("GET", `/audit?filter=${q(`action eq "resource.update" and target.id eq "${id}"`)}`);
    const records = (audit.json() as { data: { details?: { changed?: string[] } }[] }).data;
    expect(records.map((r) => r.details?.changed)).toEqual([["kept"]]);
  });

  it("nothing reached Object.prototype", () => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(
      INHERITED.filter((n) => n !== "prototype").sort(),
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
