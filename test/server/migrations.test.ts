import { rm } from "node:fs/promises";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/server/store/database.js";
import { migrateTo, migrateToLatest, migrationNames } from "../../src/server/store/migrator.js";
import { recordNonce } from "../../src/server/store/oauth-repo.js";
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

  /** The new database migrated up to `name`, as the build that added it left it; what it still lacks. */
  const migratedUpTo = async (name: string) => {
    await migrateTo(store.db, "sqlite", name);
    const all = migrationNames();
    return all.slice(all.indexOf(name) + 1);
  };

  it("runs the migrations a database lacks: 0017 re-keys the nonces by time and keeps them (no replay reopened)", async () => {
    const lacking = await migratedUpTo("0016_mail_jobs");
    // the table as 0003 made it, holding one accepted nonce
    await sql`insert into resources (id, resource_type, attributes, created_at, updated_at, version)
      values ('c1', 'OAuthConsumer', '{}', '2026-01-01', '2026-01-01', 1)`.execute(store.db);
    await sql`insert into oauth_nonces (consumer_id, token, nonce, ts, expires_at)
      values ('c1', 't1', 'n1', '1795511313', '2026-11-24T09:15:14.000Z')`.execute(store.db);

    expect(await migrateToLatest(store.db, "sqlite")).toEqual(lacking);
    expect(lacking[0]).toBe("0017_oauth_nonces_by_time");
    const rows = await store.db.selectFrom("oauth_nonces").selectAll().execute();
    expect(rows).toEqual([{ ts: 1795511313, consumer_id: "c1", token: "t1", nonce: "n1" }]);
    const again = { ts: "1795511313", consumer_id: "c1", token: "t1", nonce: "n1" };
    expect(await recordNonce(store.db, again)).toBe(false);
    expect(await recordNonce(store.db, { ...again, ts: "1795511314" })).toBe(true);
    const indexes = await sql<{ name: string }>`select name from pragma_index_list('oauth_nonces')`.execute(store.db);
    expect(indexes.rows.map((i) => i.name)).not.toContain("oauth_nonces_expires_at_idx");
  });

  /** Migrations that fill what they add from the rows an older build left: those rows, and what they become. */
  const BACKFILLS: {
    name: string;
    from: string;
    seed(): Promise<void>;
    read(): Promise<unknown>;
    expected: unknown;
  }[] = [
    {
      name: "counts the events a database already holds by type when it adds the per-type count (0018)",
      from: "0017_oauth_nonces_by_time",
      seed: async () => {
        for (const [code, type] of [
          ["a", "Webinar"],
          ["b", "webinar"],
          ["c", "call"],
          ["d", null],
        ]) {
          await sql`insert into events (code_key, code, name, type, starts_at, created_at, updated_at, version)
              values (${code}, ${code}, 'x', ${type}, '2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z',
              '2027-01-01T00:00:00.000Z', 1)`.execute(store.db);
        }
      },
      read: () => store.db.selectFrom("events_type_count").select(["type_key", "n"]).orderBy("type_key").execute(),
      expected: [
        { type_key: "call", n: 1 },
        { type_key: "webinar", n: 2 },
      ],
    },
    {
      name: "takes a temporary password pending on an ordinary account as support's when it adds issuers (0019)",
      from: "0018_events_type_count",
      seed: async () => {
        const users = [
          ["ordinary", "member", 1],
          ["privileged", "admin", 1],
          ["chosen", "member", 0],
        ] as const;
        for (const [id, role, firstLogin] of users) {
          await sql`insert into resources (id, resource_type, attributes, created_at, updated_at, version)
              values (${id}, 'User', '{}', '2026-01-01', '2026-01-01', 1)`.execute(store.db);
          await sql`insert into resource_values (resource_id, path, elem, kind, text_value)
              values (${id}, 'roles.value', 0, 's', ${role})`.execute(store.db);
          await sql`insert into credentials (user_id, password_hash, first_login, failed_logins, updated_at)
              values (${id}, 'hash', ${firstLogin}, 0, '2026-01-01')`.execute(store.db);
        }
      },
      read: () => store.db.selectFrom("credentials").select(["user_id", "issuer_role"]).orderBy("user_id").execute(),
      expected: [
        { user_id: "chosen", issuer_role: null },
        { user_id: "ordinary", issuer_role: "support" },
        { user_id: "privileged", issuer_role: null },
      ],
    },
  ];

  for (const { name, from, seed, read, expected } of BACKFILLS)
    it(name, async () => {
      const lacking = await migratedUpTo(from);
      await seed();
      expect(await migrateToLatest(store.db, "sqlite")).toEqual(lacking);
      expect(await read()).toEqual(expected);
    });

  it("leaves a database migrated by a newer build to the migrator, which refuses it", async () => {
    await migrateToLatest(store.db, "sqlite");
    await sql`insert into kysely_migration (name, timestamp) values ('9999_from_the_future', '2030-01-01')`.execute(
      store.db,
    );
    await expect(migrateToLatest(store.db, "sqlite")).rejects.toThrow(/9999_from_the_future/);
  });
});
