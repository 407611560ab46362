/**
 * The total of a list without a filter is the trigger-kept count of the types it lists (no count
 * of the rows): it must stay exact through creates and deletes, agree with a counted total, and
 * be used only where the caller may read every resource of those types. And the orders the
 * indexes of migration 0024 serve (a list of Users by userName, a page deep in the default order)
 * answer what a sort of all the rows would. On SQLite and PostgreSQL.
 */
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BULK_URN } from "../../src/contract/bulk.js";
import { migrateTo, migrateToLatest } from "../../src/server/store/migrator.js";
import { createTestDatabase, STORES, TEST_SECRET_KEY } from "../helpers/postgres.js";
import { createResource, type SignedIn, useTestServer } from "../helpers/server.js";
import { useStoreToMigrate } from "../helpers/store-to-migrate.js";

describe.each(STORES)("resource totals and orders on %s", (_store, start) => {
  const server = useTestServer({}, start);
  let member: SignedIn;
  const userIds: string[] = [];

  beforeAll(async () => {
    member = await server.signIn({ userName: "Mona.Member", roles: ["member"] });
    // a title on some users only: an order with ties and missing values
    const titles: Record<string, string> = { carol: "Engineer", Alice: "Engineer", bob: "Analyst" };
    for (const name of ["carol", "Alice", "bob", "dave", "Eve"]) {
      const body = { resourceType: "User", userName: name, ...(titles[name] && { title: titles[name] }) };
      userIds.push(String((await createResource(server.call, body)).id));
    }
    for (const room of ["Board", "Lab", "Hall"]) {
      await createResource(server.call, { resourceType: "Room", displayName: room });
    }
    await createResource(server.call, { resourceType: "OAuthConsumer", name: "Partner" });
    // a delete must take one off the kept count
    const gone = await server.call("DELETE", `/Resources/${userIds.pop()}`);
    expect(gone.statusCode, gone.body).toBe(204);
  });

  const totalOf = async (call: SignedIn["call"], query: string) => {
    const answer = await call("GET", `/Resources?${query}`);
    expect(answer.statusCode, answer.body).toBe(200);
    return (answer.json() as { totalResults: number }).totalResults;
  };

  // the filter `id pr` holds for every resource: the same list, but its total is counted
  it.each([
    { name: "every type", query: "count=0", total: 2 + 4 + 3 + 1 },
    { name: "Users", query: "resourcetypes=User", total: 2 + 4 },
    { name: "Users, the total only", query: "resourcetypes=User&count=0", total: 6 },
    { name: "a custom type", query: "resourcetypes=Room", total: 3 },
    { name: "two types", query: "resourcetypes=User,Room", total: 9 },
    { name: "a type named twice", query: "resourcetypes=Room,Room", total: 3 },
    { name: "a type no resource has", query: "resourcetypes=Printer", total: 0 },
  ])("keeps the total of $name exact, as a count agrees", async ({ query, total }) => {
    expect(await totalOf(server.call, query)).toBe(total);
    expect(await totalOf(server.call, `${query}&filter=${encodeURIComponent("id pr")}`)).toBe(total);
  });

  it.each([
    { name: "Users (only their own)", query: "resourcetypes=User", total: 1 },
    { name: "every type (their own User and the custom ones)", query: "count=0", total: 1 + 3 },
  ])("counts for a caller who may read only some of them: $name", async ({ query, total }) => {
    expect(await totalOf(member.call, query)).toBe(total);
  });

  const namesOf = async (query: string) => {
    const answer = await server.call("GET", `/Resources?${query}`);
    expect(answer.statusCode, answer.body).toBe(200);
    return (answer.json() as { Resources: { userName?: string; displayName?: string }[] }).Resources.map(
      (r) => r.userName ?? r.displayName,
    );
  };

  it.each([
    { order: "ascending", query: "resourcetypes=User&sortBy=userName" },
    { order: "descending", query: "resourcetypes=User&sortBy=userName&sortOrder=descending" },
  ])("sorts Users alone by userName, $order, case-insensitively, across pages", async ({ order, query }) => {
    const expected = ["Ada.Admin", "Alice", "bob", "carol", "dave", "Mona.Member"];
    if (order === "descending") expected.reverse();
    expect(await namesOf(query)).toEqual(expected);
    expect([...(await namesOf(`${query}&count=4`)), ...(await namesOf(`${query}&startIndex=5&count=4`))]).toEqual(
      expected,
    );
  });

  it("sorts Users among other types by userName as before: the others, without one, last", async () => {
    const names = await namesOf("resourcetypes=User,Room&sortBy=userName");
    expect(names.slice(0, 6)).toEqual(["Ada.Admin", "Alice", "bob", "carol", "dave", "Mona.Member"]);
    expect(names.slice(6).sort()).toEqual(["Board", "Hall", "Lab"]);
  });

  it("pages in the default order without losing or repeating a User", async () => {
    const all = await namesOf("resourcetypes=User");
    const paged = [
      ...(await namesOf("resourcetypes=User&count=2")),
      ...(await namesOf("resourcetypes=User&startIndex=3&count=2")),
      ...(await namesOf("resourcetypes=User&startIndex=5&count=2")),
    ];
    expect(paged).toEqual(all);
    expect(new Set(all).size).toBe(6);
  });

  // a page past the middle is read from the end, in the reverse order: it must be the same page
  it.each([
    { order: "the default order of Users", query: "resourcetypes=User" },
    { order: "every type in the default order", query: "" },
    { order: "userName, ascending", query: "resourcetypes=User&sortBy=userName" },
    { order: "userName, descending", query: "resourcetypes=User&sortBy=userName&sortOrder=descending" },
    { order: "title, ties and missing ones, ascending", query: "resourcetypes=User&sortBy=title" },
    {
      order: "title, ties and missing ones, descending",
      query: "resourcetypes=User&sortBy=title&sortOrder=descending",
    },
    { order: "userName across types, the others last", query: "resourcetypes=User,Room&sortBy=userName" },
    { order: "a filter, by title", query: `sortBy=title&filter=${encodeURIComponent('userName ne "bob"')}` },
  ])("answers every page of $order as a slice of the whole list", async ({ query }) => {
    const idsOf = async (paging: string) => {
      const answer = await server.call("GET", `/Resources?${query}&${paging}`);
      expect(answer.statusCode, answer.body).toBe(200);
      return (answer.json() as { Resources: { id: string }[] }).Resources.map((r) => r.id);
    };
    const all = await idsOf("count=500");
    expect(new Set(all).size).toBe(all.length);
    for (const count of [1, 2, 3]) {
      for (let start = 1; start <= all.length + 1; start++) {
        expect(await idsOf(`startIndex=${start}&count=${count}`), `startIndex=${start}&count=${count}`).toEqual(
          all.slice(start - 1, start - 1 + count),
        );
      }
    }
  });
});

describe.each(["sqlite", "postgres"] as const)("migration 0024 on %s", (dialect) => {
  const openStore = useStoreToMigrate(dialect);

  it("counts the resources a database already holds, then keeps counting", async () => {
    const store = await openStore();
    await migrateTo(store.db, dialect, "0023_external_id_unique");
    const insert = (id: string, type: string) =>
      sql`insert into resources (id, resource_type, attributes, created_at, updated_at, version)
        values (${id}, ${type}, '{}', '2026-01-01', '2026-01-01', 1)`.execute(store.db);
    for (const [id, type] of [
      ["u1", "User"],
      ["u2", "User"],
      ["r1", "Room"],
    ] as const) {
      await insert(id, type);
    }
    expect((await migrateToLatest(store.db, dialect))[0]).toBe("0024_resource_type_count");
    await insert("r2", "Room");
    await sql`delete from resources where id = 'u1'`.execute(store.db);
    const counts = await store.db
      .selectFrom("resource_type_count")
      .select(["resource_type", (eb) => eb.fn.sum<string | number>("n").as("n")])
      .groupBy("resource_type")
      .orderBy("resource_type")
      .execute();
    expect(counts.map((row) => [row.resource_type, Number(row.n)])).toEqual([
      ["Room", 2],
      ["User", 1],
    ]);
  });
});

describe("the planner's statistics of the resources on PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let client: pg.Client;
  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });
  const server = useTestServer(async () => {
    database = await createTestDatabase();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    return { secretKey: TEST_SECRET_KEY, databaseUrl: database.url };
  });

  const plannedRows = async () =>
    Number((await client.query("select reltuples from pg_class where oid = 'resources'::regclass")).rows[0].reltuples);
  const bulkOfUsers = async (prefix: string, count: number) => {
    const Operations = Array.from({ length: count }, (_, i) => ({
      method: "POST",
      path: "/Resources",
      bulkId: `${prefix}${i}`,
      data: { resourceType: "User", userName: `${prefix}.${i}`, emails: [{ value: `${prefix}.${i}@example.com` }] },
    }));
    const answer = await server.call("POST", "/Bulk", { schemas: [BULK_URN.request], Operations });
    expect(answer.statusCode, answer.body).toBe(200);
  };

  it("are gathered again once a bulk request has grown them by a tenth and 50 rows, not after every request", async () => {
    await bulkOfUsers("grown", 60);
    const after = await plannedRows();
    expect(after).toBe(61);
    await bulkOfUsers("few", 3);
    expect(await plannedRows()).toBe(after);
  });

  // what a vacuum merges, returning the pages it took from the trigram index's pending list
  const pendingPages = async () =>
    Number(
      (await client.query("select gin_clean_pending_list('resource_values_trigram_idx'::regclass) as n")).rows[0].n,
    );

  it("merges the trigram index's pending list when it gathers them, so that co reads no list", async () => {
    await pendingPages();
    await bulkOfUsers("fewer", 3);
    expect(await pendingPages(), "a request that gathers nothing leaves its values pending").toBeGreaterThan(0);
    await bulkOfUsers("pending", 80);
    expect(await pendingPages()).toBe(0);
  });
});
