/**
 * The total of `filter=active eq true|false` on a list of Users is the trigger-kept count of
 * migration 0033 (no count of the matches): it must stay exact through every write that changes
 * a User's `active` (create, PUT, PATCH, /Bulk, delete), agree with a counted total, and be used
 * only where the caller may read every User. On SQLite and PostgreSQL.
 */
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { BULK_URN } from "../../src/contract/bulk.js";
import { migrateTo, migrateToLatest } from "../../src/server/store/migrator.js";
import { STORES } from "../helpers/postgres.js";
import { createResource, type SignedIn, useTestServer } from "../helpers/server.js";
import { useStoreToMigrate } from "../helpers/store-to-migrate.js";

const PATCH_URN = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

describe.each(STORES)("the kept count of Users by active on %s", (_store, start) => {
  const server = useTestServer({}, start);
  let support: SignedIn;
  let member: SignedIn;

  beforeAll(async () => {
    support = await server.signIn({ userName: "Sam.Support", roles: ["support"] });
    member = await server.signIn({ userName: "Mona.Member", roles: ["member"] });
    const ids: Record<string, string> = {};
    for (const [name, active] of [
      ["carol", undefined],
      ["dave", false],
      ["erin", true],
      ["frank", false],
      ["gone", false],
      ["grace", true],
    ] as const) {
      const body = { resourceType: "User", userName: name, ...(active !== undefined && { active }) };
      ids[name] = String((await createResource(server.call, body)).id);
    }
    await createResource(server.call, { resourceType: "Room", displayName: "Lab", active: false });
    const bulk = await server.call("POST", "/Bulk", {
      schemas: [BULK_URN.request],
      Operations: ["h1", "h2", "h3"].map((name, i) => ({
        method: "POST",
        path: "/Resources",
        bulkId: name,
        data: { resourceType: "User", userName: name, active: i > 0 },
      })),
    });
    expect(bulk.statusCode, bulk.body).toBe(200);
    // carol true → false by PATCH, erin true → false by PUT, dave false → true by PATCH; grace
    // rewritten without a change of active; gone deleted
    const changes = [
      server.call("PATCH", `/Resources/${ids.carol}`, {
        schemas: [PATCH_URN],
        Operations: [{ op: "replace", path: "active", value: false }],
      }),
      server.call("PUT", `/Resources/${ids.erin}`, { resourceType: "User", userName: "erin", active: false }),
      server.call("PATCH", `/Resources/${ids.dave}`, {
        schemas: [PATCH_URN],
        Operations: [{ op: "replace", value: { active: true } }],
      }),
      server.call("PUT", `/Resources/${ids.grace}`, { resourceType: "User", userName: "grace", title: "Lead" }),
    ];
    for (const answer of await Promise.all(changes)) expect(answer.statusCode, answer.body).toBe(200);
    const gone = await server.call("DELETE", `/Resources/${ids.gone}`);
    expect(gone.statusCode, gone.body).toBe(204);
  });

  const totalOf = async (call: SignedIn["call"], path: string, filter: string) => {
    const answer = await call("GET", `${path}&filter=${encodeURIComponent(filter)}`);
    expect(answer.statusCode, answer.body).toBe(200);
    return (answer.json() as { totalResults: number }).totalResults;
  };

  // false: carol, erin, frank, h1; true: the admin, Sam, Mona, dave, grace, h2, h3
  it.each([
    { name: "inactive Users", path: "/Resources?resourcetypes=User", filter: "active eq false", total: 4 },
    { name: "active Users", path: "/Resources?resourcetypes=User", filter: "active eq true", total: 7 },
    { name: "the total only", path: "/Resources?resourcetypes=User&count=0", filter: "active eq false", total: 4 },
    { name: "through /Users", path: "/Users?count=1", filter: "active eq false", total: 4 },
    {
      name: "the attribute's full name",
      path: "/Users?count=1",
      filter: "urn:ietf:params:scim:schemas:core:2.0:User:Active eq true",
      total: 7,
    },
    // among other types the filter is counted: the Room's active is no User's
    { name: "Users and Rooms", path: "/Resources?resourcetypes=User,Room", filter: "active eq false", total: 5 },
  ])("keeps the total of $name exact, as a count agrees", async ({ path, filter, total }) => {
    expect(await totalOf(server.call, path, filter)).toBe(total);
    expect(await totalOf(support.call, path, filter)).toBe(total);
    // `id pr` holds for every resource: the same list, its total counted
    expect(await totalOf(server.call, path, `${filter} and id pr`)).toBe(total);
  });

  it("counts for a caller who may read only their own User", async () => {
    expect(await totalOf(member.call, "/Resources?resourcetypes=User", "active eq false")).toBe(0);
    expect(await totalOf(member.call, "/Resources?resourcetypes=User", "active eq true")).toBe(1);
  });

  // a list of Users alone reads active from its derived column; a list of every type from the values
  it.each([
    "active eq false",
    "active eq true",
    "not (active eq true)",
    "active pr",
    "not (active pr)",
    'active eq false or userName eq "dave"',
    'active eq true and userName sw "h"',
    "not (active eq false) and not (active eq true)",
  ])("finds the same Users for %s from the column as from the values", async (filter) => {
    const namesOf = async (path: string) => {
      const answer = await server.call("GET", `${path}&sortBy=userName&filter=${encodeURIComponent(filter)}`);
      expect(answer.statusCode, answer.body).toBe(200);
      return (answer.json() as { Resources: { userName: string }[] }).Resources.map((r) => r.userName);
    };
    const fromValues = await namesOf("/Resources?count=100");
    expect(await namesOf("/Resources?resourcetypes=User&count=100")).toEqual(fromValues.filter(Boolean));
  });

  it("lists the Users the kept total counts", async () => {
    const answer = await server.call("GET", `/Users?sortBy=userName&filter=${encodeURIComponent("active eq false")}`);
    expect(answer.statusCode, answer.body).toBe(200);
    const names = (answer.json() as { Resources: { userName: string }[] }).Resources.map((r) => r.userName);
    expect(names).toEqual(["carol", "erin", "frank", "h1"]);
  });
});

describe.each(["sqlite", "postgres"] as const)("migration 0033 on %s", (dialect) => {
  const openStore = useStoreToMigrate(dialect);

  it("counts the Users a database already holds by active, then keeps counting", async () => {
    const store = await openStore();
    await migrateTo(store.db, dialect, "0032_value_trigram_strings");
    const insert = (id: string, type: string, attributes: Record<string, unknown>) =>
      sql`insert into resources (id, resource_type, attributes, created_at, updated_at, version)
        values (${id}, ${type}, ${JSON.stringify(attributes)}, '2026-01-01', '2026-01-01', 1)`.execute(store.db);
    await insert("u1", "User", { userName: "u1", active: true });
    await insert("u2", "User", { userName: "u2", active: false });
    await insert("u3", "User", { userName: "u3" });
    await insert("r1", "Room", { active: false });
    expect((await migrateToLatest(store.db, dialect))[0]).toBe("0033_user_active_count");
    await insert("u4", "User", { userName: "u4", active: false });
    await sql`delete from resources where id = 'u2'`.execute(store.db);
    await sql`update resources set attributes = ${JSON.stringify({ userName: "u3", active: false })}
      where id = 'u3'`.execute(store.db);
    await sql`update resources set attributes = ${JSON.stringify({ userName: "u1" })} where id = 'u1'`.execute(
      store.db,
    );
    const counts = await store.db
      .selectFrom("user_active_count")
      .select(["active", (eb) => eb.fn.sum<string | number>("n").as("n")])
      .groupBy("active")
      .orderBy("active")
      .execute();
    expect(counts.map((row) => [row.active, Number(row.n)])).toEqual([
      ["false", 2],
      ["true", 0],
    ]);
  });
});
