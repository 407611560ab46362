/**
 * `search=TEXT` over Users on GET /Resources and GET /Users, on both stores: what it finds (user
 * name, names, display name, e-mails, externalId, in any case), in which order (an exact user
 * name, then a value that starts with the text, then one that contains it; accents ignored, as
 * `muller` finds `Müller`), paged as any list;
 * who may search; what is refused; and, at 20,000 Users, a plan that reads an index.
 */
import { CompiledQuery, type Kysely, type RawBuilder, sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { userSearch } from "../../src/server/filter/user-search.js";
import type { Schema } from "../../src/server/store/schema.js";
import { SEARCH_PATH, SEPARATOR } from "../../src/server/store/user-search-text.js";
import { DATABASES, scimErrorOf, useScimServer } from "../helpers/scim.js";
import { signIn } from "../helpers/server.js";

const USERS = [
  { userName: "lee", name: { givenName: "Pat", familyName: "Morgan" }, emails: [{ value: "pat@example.com" }] },
  { userName: "ann.leeds", name: { givenName: "Ann", familyName: "Leeds" }, emails: [{ value: "ann@example.com" }] },
  { userName: "bob", name: { givenName: "Bob", familyName: "Kaleen" }, emails: [{ value: "bob@shop.example.org" }] },
  { userName: "carla", displayName: "Carla Ng", externalId: "HR-00417", emails: [{ value: "carla.ng@example.com" }] },
  { userName: "dave", emails: [{ value: "dave@mkt.example.net" }] },
  { userName: "josé", emails: [{ value: "pp@mail.test" }] },
  {
    userName: "jm",
    name: { givenName: "José", familyName: "Mu\u0308ller" },
    displayName: "Ørjan Straße",
    emails: [{ value: "jm@mail.test" }],
  },
];

describe.each(DATABASES)("users search on $name", ({ name, start }) => {
  const scim = useScimServer(start);
  beforeAll(async () => {
    for (const user of USERS) {
      const created = await scim.call("POST", "/Resources", { resourceType: "User", ...user });
      expect(created.status, created.text).toBe(201);
    }
  });

  const search = async (text: string, extra = "") => {
    const answer = await scim.call("GET", `/Resources?resourcetypes=User&search=${encodeURIComponent(text)}${extra}`);
    expect(answer.status, answer.text).toBe(200);
    return answer.json() as { totalResults: number; Resources: { userName: string }[] };
  };
  const namesFound = async (text: string) => (await search(text)).Resources.map((user) => user.userName);

  it.each([
    { what: "an exact user name first, then prefixes, then contains", text: "lee", want: ["lee", "ann.leeds", "bob"] },
    { what: "in any case", text: "LEEDS", want: ["ann.leeds"] },
    { what: "a family name", text: "kaleen", want: ["bob"] },
    { what: "a given name", text: "Pat", want: ["lee"] },
    { what: "part of an e-mail", text: "shop.example", want: ["bob"] },
    { what: "an externalId, in any case", text: "hr-004", want: ["carla"] },
    { what: "a display name with a space", text: "Carla Ng", want: ["carla"] },
    { what: "a text around it", text: "  dave  ", want: ["dave"] },
    { what: "two characters: at the start of a value", text: "ca", want: ["carla"] },
    { what: "two characters: not inside a value", text: "rl", want: [] },
    { what: "LIKE's wildcards as text", text: "%", want: [] },
    { what: "no match", text: "no such person", want: [] },
    { what: "no accent for one (decomposed as stored)", text: "muller", want: ["jm"] },
    { what: "no accent, in any case", text: "MULLER", want: ["jm"] },
    { what: "the accent as typed (composed)", text: "Müller", want: ["jm"] },
    { what: "a user name's accent left out: exact first", text: "Jose", want: ["josé", "jm"] },
    { what: "an accent where there is none", text: "jösé", want: ["josé", "jm"] },
    { what: "two characters, a letter without its stroke", text: "or", want: ["jm"] },
    { what: "letters without a mark: ø, ß", text: "orjan strasse", want: ["jm"] },
  ])("finds $want for '$text' ($what)", async ({ text, want }) => {
    expect(await namesFound(text)).toEqual(want);
  });

  it("ranks prefixes by user name, and contains after them", async () => {
    // every e-mail contains "example"; none starts with it
    expect(await namesFound("example")).toEqual(["ann.leeds", "bob", "carla", "dave", "lee"]);
    // "b" starts bob's user name and e-mail alone
    expect(await namesFound("bob")).toEqual(["bob"]);
    // "pat" is lee's given name and the start of its e-mail: a prefix, ahead of nothing else
    expect(await namesFound("morgan")).toEqual(["lee"]);
  });

  it("pages as any list: the pages put together are the whole answer", async () => {
    const whole = await search("example");
    expect(whole.totalResults).toBe(5);
    const pages: string[] = [];
    for (const startIndex of [1, 3, 5]) {
      const page = await search("example", `&count=2&startindex=${startIndex}`);
      expect(page.totalResults).toBe(5);
      pages.push(...page.Resources.map((user) => user.userName));
    }
    expect(pages).toEqual(whole.Resources.map((user) => user.userName));
    expect((await search("example", "&count=0")).Resources).toEqual([]);
  });

  it("narrows a filter's answer, and on /Users answers in SCIM's representation", async () => {
    const filtered = await search("example", `&filter=${encodeURIComponent('userName sw "c"')}`);
    expect(filtered.Resources.map((user) => user.userName)).toEqual(["carla"]);
    const users = await scim.call("GET", "/Users?search=lee");
    expect(users.status, users.text).toBe(200);
    const body = users.json();
    expect(body.Resources.map((user: { userName: string }) => user.userName)).toEqual(["lee", "ann.leeds", "bob"]);
    expect(body.Resources[0].schemas).toContain("urn:ietf:params:scim:schemas:core:2.0:User");
  });

  it.each([
    { what: "an empty text", query: "/Resources?resourcetypes=User&search=" },
    { what: "a blank text", query: "/Resources?resourcetypes=User&search=%20%20" },
    { what: "no type", query: "/Resources?search=lee" },
    { what: "another type", query: "/Resources?resourcetypes=OAuthConsumer&search=lee" },
    { what: "a blank text on /Users", query: "/Users?search=%20" },
    { what: "a text too long", query: `/Resources?resourcetypes=User&search=${"x".repeat(257)}` },
  ])("refuses $what with 400", async ({ query }) => {
    const answer = await scim.call("GET", query);
    expect(answer.status, answer.text).toBe(400);
    if (query.startsWith("/Users")) scimErrorOf(answer, 400);
    else expect(answer.json().code, answer.text).toMatch(/^(invalid|validation)/);
  });

  it("lets support search every User, and a member find itself alone", async () => {
    const app = scim.server.app;
    const support = await signIn(app, { userName: "sue.support", roles: ["support"] });
    const asSupport = await support.call("GET", "/Resources?resourcetypes=User&search=lee");
    expect(asSupport.statusCode, asSupport.body).toBe(200);
    expect(asSupport.json().Resources.map((user: { userName: string }) => user.userName)).toEqual([
      "lee",
      "ann.leeds",
      "bob",
    ]);
    const member = await signIn(app, { userName: "leena.member", roles: ["member"] });
    const asMember = await member.call("GET", "/Resources?resourcetypes=User&search=lee");
    expect(asMember.statusCode, asMember.body).toBe(200);
    expect(asMember.json().Resources.map((user: { userName: string }) => user.userName)).toEqual(["leena.member"]);
    expect(asMember.json().totalResults).toBe(1);
  });

  describe("the plan at 20,000 Users", () => {
    const dialect = name === "SQLite" ? "sqlite" : "postgres";
    beforeAll(async () => {
      const db = scim.server.app.services.store.db;
      await fillUsers(db, 20_000);
      await sql`analyze`.execute(db);
    });

    const planOf = async (text: string) => {
      const db = scim.server.app.services.store.db;
      const search = userSearch(text, dialect);
      const query = db
        .selectFrom("resources as r")
        .select("r.id")
        .where(sql`r.resource_type = 'User' and ${search.where}` as RawBuilder<boolean>)
        .orderBy(search.order.keys[0]!)
        .orderBy(search.order.keys[1]!)
        .limit(50)
        .compile();
      const explain = dialect === "sqlite" ? "explain query plan " : "explain ";
      const plan = await db.executeQuery<Record<string, string>>(
        CompiledQuery.raw(`${explain}${query.sql}`, [...query.parameters]),
      );
      return plan.rows.map((row) => row.detail ?? row["QUERY PLAN"]).join("\n");
    };

    it.each([
      {
        text: "user0042",
        sqlite: [/resource_values_trigram VIRTUAL TABLE INDEX/],
        postgres: [/resource_values_search_idx/],
      },
      {
        text: "zq",
        sqlite: [/resource_values_trigram VIRTUAL TABLE INDEX/],
        postgres: [/resource_values_search_idx/],
      },
    ])("reads an index for '$text', not every row", async ({ text, ...wanted }) => {
      const plan = await planOf(text);
      for (const step of wanted[dialect]) expect(plan).toMatch(step);
      // no walk through every value or every resource
      expect(plan).not.toMatch(/SCAN (v|r|s)\b|Seq Scan on resource/);
    });
  });
});

/** `count` Users written straight into the tables, each with a user name, an e-mail and a family name. */
async function fillUsers(db: Kysely<Schema>, count: number): Promise<void> {
  await sql`insert into resources (id, resource_type, attributes, created_at, updated_at, version, user_name_key)
    with recursive n(i) as (select 1 union all select i + 1 from n where i < ${count})
    select 'filled-' || i, 'User', '{}', '2026-01-01', '2026-01-01', 1, 'user' || i from n`.execute(db);
  for (const [path, value] of [
    ["username", sql`'user' || i`],
    ["emails.value", sql`'user' || i || '@filled.example.com'`],
    ["name.familyname", sql`'family' || i`],
  ] as const) {
    await sql`insert into resource_values (resource_id, path, elem, kind, text_value)
      with recursive n(i) as (select 1 union all select i + 1 from n where i < ${count})
      select 'filled-' || i, ${path}, null, 's', ${value} from n`.execute(db);
  }
  // and the search row the store writes with them (store/user-search-text.ts)
  const sep = sql`cast(${SEPARATOR} as text)`;
  await sql`insert into resource_values (resource_id, path, elem, kind, text_value)
    with recursive n(i) as (select 1 union all select i + 1 from n where i < ${count})
    select 'filled-' || i, ${SEARCH_PATH}, 0, 's',
      ${sep} || 'user' || i || ${sep} || 'user' || i || '@filled.example.com' || ${sep} || 'family' || i || ${sep} from n`.execute(
    db,
  );
}
