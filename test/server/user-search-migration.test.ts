/**
 * Migration 0042 on both stores: the Users of an existing directory get their search rows, built
 * from the values they hold, so that `users search` finds them without accents at once; other
 * resources get none; on PostgreSQL the search rows have a trigram index of their own.
 */
import { type RawBuilder, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { userSearch } from "../../src/server/filter/user-search.js";
import { migrateTo, migrateToLatest } from "../../src/server/store/migrator.js";
import { SEARCH_PATH } from "../../src/server/store/user-search-text.js";
import { useStoreToMigrate } from "../helpers/store-to-migrate.js";

describe.each(["sqlite", "postgres"] as const)("migration 0042 on %s", (dialect) => {
  const openStore = useStoreToMigrate(dialect);

  it("writes the search rows of every User from its values, and of nothing else", async () => {
    const store = await openStore();
    await migrateTo(store.db, dialect, "0040_addresses_by_delegate");
    const insert = async (id: string, type: string, values: [string, string][]) => {
      await sql`insert into resources (id, resource_type, user_name_key, attributes, created_at, updated_at, version)
        values (${id}, ${type}, ${type === "User" ? id : null}, '{}', '2026-01-01', '2026-01-01', 1)`.execute(store.db);
      for (const [path, text] of values) {
        await sql`insert into resource_values (resource_id, path, elem, kind, text_value)
          values (${id}, ${path}, null, 's', ${text.toLowerCase()})`.execute(store.db);
      }
    };
    await insert("u1", "User", [
      ["username", "José"],
      ["name.familyname", "Müller"],
      ["title", "Chef"],
    ]);
    await insert("u2", "User", [["username", "plain"]]);
    await insert("g1", "Group", [["displayname", "Müller team"]]);
    expect(await migrateToLatest(store.db, dialect)).toContain("0042_user_search_rows");

    const rows = await sql<{ resource_id: string; text_value: string }>`select resource_id, text_value
      from resource_values where path = ${SEARCH_PATH} order by resource_id`.execute(store.db);
    expect(rows.rows.map((row) => [row.resource_id, row.text_value])).toEqual([
      ["u1", "\njose\nmuller\n"],
      ["u2", "\nplain\n"],
    ]);
    const found = async (text: string) => {
      const search = userSearch(text, dialect);
      const answer = await store.db
        .selectFrom("resources as r")
        .select("r.id")
        .where(sql`r.resource_type = 'User' and ${search.where}` as RawBuilder<boolean>)
        .orderBy(search.order.keys[0]!)
        .execute();
      return answer.map((row) => row.id);
    };
    expect(await found("muller")).toEqual(["u1"]);
    expect(await found("Jose")).toEqual(["u1"]);
    expect(await found("chef")).toEqual([]);
    if (dialect === "postgres") {
      const index = await sql<{ n: number }>`select count(*)::int as n from pg_indexes
        where indexname = 'resource_values_search_idx'`.execute(store.db);
      expect(index.rows[0]?.n).toBe(1);
    }
  });
});
