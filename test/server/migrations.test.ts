import { rm } from "node:fs/promises";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/server/store/database.js";
import { migrateToLatest } from "../../src/server/store/migrations.js";
import { makeDataDir } from "../helpers/server.js";

/**
 * Every server start and embedded command migrates; a database already up to date is recognised
 * by one read, and any other state is the migrator's, as it always was.
 */
describe("migrateToLatest", () => {
  let root: string;
  let store: Store;

  beforeEach(async () => {
    root = await makeDataDir();
    store = await openStore({ dataDir: root });
  });

  afterEach(async () => {
    await store.close();
    await rm(root, { recursive: true, force: true });
  });

  const names = async () =>
    (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(store.db)).rows.map(
      (row) => row.name,
    );

  it("runs every migration on a new database, then none", async () => {
    const applied = await migrateToLatest(store.db, "sqlite");
    expect(applied.length).toBeGreaterThan(10);
    expect(await names()).toEqual([...applied].sort());
    expect(await migrateToLatest(store.db, "sqlite")).toEqual([]);
  });

  it("runs the migration a database lacks", async () => {
    await migrateToLatest(store.db, "sqlite");
    // 0016 undone by hand, as a database last migrated by the build before it would be
    await sql`alter table mail_queue drop column kind`.execute(store.db);
    await sql`delete from kysely_migration where name = '0016_mail_jobs'`.execute(store.db);
    expect(await migrateToLatest(store.db, "sqlite")).toEqual(["0016_mail_jobs"]);
    const columns = await sql<{ name: string }>`select name from pragma_table_info('mail_queue')`.execute(store.db);
    expect(columns.rows.map((c) => c.name)).toContain("kind");
  });

  it("leaves a database migrated by a newer build to the migrator, which refuses it", async () => {
    await migrateToLatest(store.db, "sqlite");
    await sql`insert into kysely_migration (name, timestamp) values ('9999_from_the_future', '2030-01-01')`.execute(
      store.db,
    );
    await expect(migrateToLatest(store.db, "sqlite")).rejects.toThrow(/9999_from_the_future/);
  });
});
