/**
 * `co` and `ew` filters (LIKE '%text%') through a trigram index: on both stores they answer as the
 * LIKE alone would, through an update and a delete of the values (and on SQLite a VACUUM, which
 * renumbers rowids in a table without an INTEGER PRIMARY KEY); on SQLite the plan reads the FTS5
 * index (migration 0027). On PostgreSQL (0026), pg_trgm's GIN index where the migrating role may
 * create the extension, and a role that may not still migrates, without it.
 */
import { rm } from "node:fs/promises";
import { CompiledQuery, type RawBuilder, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileFilter } from "../../src/server/filter/compile.js";
import { parseFilter } from "../../src/server/filter/parse.js";
import { resourcesTargetAt } from "../../src/server/filter/resources-target.js";
import { openStore } from "../../src/server/store/database.js";
import { migrateTo, migrateToLatest } from "../../src/server/store/migrator.js";
import { refreshStatisticsAfterGrowth } from "../../src/server/store/resources-repo.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { DATABASES, userNamesFound, useScimServer } from "../helpers/scim.js";
import { makeDataDir } from "../helpers/server.js";

describe.each(DATABASES)("co and ew filters on $name", ({ name, start }) => {
  const scim = useScimServer(start);
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    for (const [key, email, display] of [
      ["ann", "ann.lee@dept3.example.com", 'Ann "the boss" Lee'],
      ["bo", "bo@dept4.example.com", "Bo"],
      ["cy", "cy@DEPT3.example.com", "Cy"],
    ] as const) {
      const body = { resourceType: "User", userName: key, displayName: display, emails: [{ value: email }] };
      const created = await scim.call("POST", "/Resources", body, { "content-type": "application/json" });
      expect(created.status, created.text).toBe(201);
      ids[key] = created.json().id;
    }
  });

  const found = (filter: string) => userNamesFound(scim, filter);

  it.each([
    { filter: 'emails co "@dept3.example"', want: ["ann", "cy"] },
    { filter: 'emails co "DEPT3"', want: ["ann", "cy"] },
    { filter: 'emails ew "dept4.example.com"', want: ["bo"] },
    { filter: 'emails co "t3.ex"', want: ["ann", "cy"] },
    { filter: 'emails co "no such text"', want: [] },
    { filter: 'emails co "@d"', want: ["ann", "bo", "cy"] },
    { filter: 'displayName co "\\"the boss\\""', want: ["ann"] },
    { filter: 'emails co "%"', want: [] },
    { filter: 'emails co "_"', want: [] },
  ])("finds $want for $filter", async ({ filter, want }) => {
    expect(await found(filter)).toEqual(want);
  });

  it("follows a change of the value, and a delete", async () => {
    const changed = await scim.call(
      "PATCH",
      `/Resources/${ids.bo}`,
      {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "replace", path: "emails", value: [{ value: "bo@dept9.example.com" }] }],
      },
      { "content-type": "application/json" },
    );
    expect(changed.status, changed.text).toBe(200);
    expect(await found('emails co "dept4"')).toEqual([]);
    expect(await found('emails co "dept9"')).toEqual(["bo"]);
    const gone = await scim.call("DELETE", `/Resources/${ids.cy}`);
    expect(gone.status, gone.text).toBe(204);
    expect(await found('emails co "dept3"')).toEqual(["ann"]);
    if (name === "SQLite") {
      await sql`vacuum`.execute(scim.server.app.services.store.db);
      expect(await found('emails co "dept3"')).toEqual(["ann"]);
      expect(await found('emails co "dept9"')).toEqual(["bo"]);
    }
  });

  it.runIf(name === "SQLite")("plans the compiled filter through the FTS5 trigram index", async () => {
    const db = scim.server.app.services.store.db;
    const where = compileFilter(
      parseFilter('emails co "dept3"'),
      resourcesTargetAt(new Date().toISOString(), "sqlite"),
    );
    const query = db
      .selectFrom("resources as r")
      .select("r.id")
      .where(where as RawBuilder<boolean>)
      .compile();
    const plan = await db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
    );
    const steps = plan.rows.map((row) => row.detail).join("\n");
    expect(steps).toMatch(/SCAN resource_values_trigram VIRTUAL TABLE INDEX/);
    expect(steps).toMatch(/SEARCH v USING INTEGER PRIMARY KEY/);
  });
});

describe("the trigram index of resource values on PostgreSQL", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  /** Migrates a new database as the given role (its owner, a superuser, by default); a superuser's client on it, and the role's URL. */
  async function migrated(asRole?: { name: string; password: string }) {
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    cleanups.push(() => admin.end());
    let url = database.url;
    if (asRole) {
      // a role of the cluster, so one per run; it may make tables in the database, not extensions
      await admin.query(`create role ${asRole.name} login password '${asRole.password}'`);
      cleanups.push(() => dropRole(database.url, asRole.name));
      await admin.query(`grant connect on database ${new URL(database.url).pathname.slice(1)} to ${asRole.name}`);
      await admin.query(`grant usage, create on schema public to ${asRole.name}`);
      const own = new URL(database.url);
      own.username = asRole.name;
      own.password = asRole.password;
      url = own.toString();
    }
    const root = await makeDataDir();
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const store = await openStore({ dataDir: root, databaseUrl: url });
    try {
      expect(await migrateToLatest(store.db, "postgres")).toContain("0026_value_trigram_index");
    } finally {
      await store.close();
    }
    return { client: admin, url };
  }

  const trigramIndexes = async (client: pg.Client) =>
    (await client.query("select indexname from pg_indexes where indexname = 'resource_values_trigram_idx'")).rowCount;

  it("answers LIKE '%text%' from the index where the role may create the extension", async () => {
    const { client } = await migrated();
    expect(await trigramIndexes(client)).toBe(1);
    await client.query("set enable_seqscan = off");
    const plan = await client.query(
      "explain select resource_id from resource_values where text_value like $1 escape '\\'",
      ["%dept3.example.com%"],
    );
    expect(plan.rows.map((row) => row["QUERY PLAN"]).join("\n")).toContain("resource_values_trigram_idx");
  });

  it("migrates without it where the role may not", async () => {
    const name = `bizctl_limited_${process.pid}_${Date.now()}`;
    const { client } = await migrated({ name, password: "limited-role-password" });
    expect(await trigramIndexes(client)).toBe(0);
    const tables = await client.query("select count(*)::int as n from pg_tables where tablename = 'resource_values'");
    expect(tables.rows[0].n).toBe(1);
  });

  it("grows a directory served by a role that owns neither its tables nor their trigram index", async () => {
    const { client, url } = await migrated();
    const role = { name: `bizctl_writer_${process.pid}_${Date.now()}`, password: "writer-role-password" };
    await client.query(`create role ${role.name} login password '${role.password}'`);
    cleanups.push(() => dropRole(url, role.name));
    await client.query(`grant select, insert, update, delete on all tables in schema public to ${role.name}`);
    const served = new URL(url);
    served.username = role.name;
    served.password = role.password;
    const root = await makeDataDir();
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const store = await openStore({ dataDir: root, databaseUrl: served.toString() });
    try {
      await sql`insert into resources (id, resource_type, attributes, created_at, updated_at, version)
        select 'u' || n, 'User', '{}', '2026-01-01', '2026-01-01', 1 from generate_series(1, 80) n`.execute(store.db);
      await expect(refreshStatisticsAfterGrowth(store.db, "postgres")).resolves.toBeUndefined();
    } finally {
      await store.close();
    }
  });
});

/** Drops a role made for a test: what it owns and was granted in its database first. */
async function dropRole(databaseUrl: string, role: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`drop owned by ${role} cascade`);
    await client.query(`drop role if exists ${role}`);
  } finally {
    await client.end();
  }
}

describe("migration 0027 on SQLite", () => {
  it("keeps the values a database holds, each searchable by its trigrams", async () => {
    const root = await makeDataDir();
    const store = await openStore({ dataDir: root });
    try {
      await migrateTo(store.db, "sqlite", "0026_value_trigram_index");
      await sql`insert into resources (id, resource_type, attributes, created_at, updated_at, version)
        values ('u1', 'User', '{}', '2026-01-01', '2026-01-01', 1)`.execute(store.db);
      await sql`insert into resource_values (resource_id, path, elem, kind, text_value, num_value) values
        ('u1', 'emails.value', 0, 's', 'ann@dept3.example.com', null), ('u1', 'floor', null, 'n', null, 3)`.execute(
        store.db,
      );
      // 0027 first, then whatever later migrations there are
      // up to 0027 alone: a later migration (0042) adds rows of its own to a User's values
      expect((await migrateTo(store.db, "sqlite", "0027_value_trigram_search"))[0]).toBe("0027_value_trigram_search");
      const rows = await sql<{ path: string; text_value: string | null; num_value: number | null }>`
        select path, text_value, num_value from resource_values order by path`.execute(store.db);
      expect(rows.rows).toEqual([
        { path: "emails.value", text_value: "ann@dept3.example.com", num_value: null },
        { path: "floor", text_value: null, num_value: 3 },
      ]);
      const found = await sql<{ resource_id: string }>`select v.resource_id from resource_values_trigram
        cross join resource_values v on v.id = resource_values_trigram.rowid
        where resource_values_trigram match '"dept3"'`.execute(store.db);
      expect(found.rows).toEqual([{ resource_id: "u1" }]);
      // the cascade from a deleted resource takes its values out of the index too
      await sql`delete from resources where id = 'u1'`.execute(store.db);
      const after =
        await sql`select rowid from resource_values_trigram where resource_values_trigram match '"dept3"'`.execute(
          store.db,
        );
      expect(after.rows).toEqual([]);
    } finally {
      await store.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
