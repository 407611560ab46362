/**
 * Migration 0026 on PostgreSQL: `co` filters (LIKE '%text%') get pg_trgm's GIN index where the
 * migrating role may create the extension, and a role that may not still migrates, without it.
 */
import { rm } from "node:fs/promises";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/server/store/database.js";
import { migrateToLatest } from "../../src/server/store/migrator.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { makeDataDir } from "../helpers/server.js";

describe("the trigram index of resource values on PostgreSQL", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  /** Migrates a new database as the given role (its owner, a superuser, by default); a client on it. */
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
    return admin;
  }

  const trigramIndexes = async (client: pg.Client) =>
    (await client.query("select indexname from pg_indexes where indexname = 'resource_values_trigram_idx'")).rowCount;

  it("answers LIKE '%text%' from the index where the role may create the extension", async () => {
    const client = await migrated();
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
    const client = await migrated({ name, password: "limited-role-password" });
    expect(await trigramIndexes(client)).toBe(0);
    const tables = await client.query("select count(*)::int as n from pg_tables where tablename = 'resource_values'");
    expect(tables.rows[0].n).toBe(1);
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
