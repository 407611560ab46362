/**
 * Since migration 0032 SQLite's trigram index holds only strings of three characters or more, the
 * only values a `co` or `ew` of three characters or more can match: filters still answer as the
 * LIKE alone would, for short needles and short values too, through changes and deletes; and the
 * migration keeps what an older database held searchable.
 */
import { rm } from "node:fs/promises";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/server/store/database.js";
import { migrateTo } from "../../src/server/store/migrator.js";
import { DATABASES, PATCH_OP, userNamesFound, useScimServer } from "../helpers/scim.js";
import { makeDataDir } from "../helpers/server.js";

const JSON_BODY = { "content-type": "application/json" };

describe.each(DATABASES)("co and ew on short values and needles on $name", ({ name, start }) => {
  const scim = useScimServer(start);
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    for (const [userName, displayName, title, active] of [
      ["al", "Al", "abc", true],
      ["bob", "Bob Z", "ab", true],
      ["cyd", "Cy", "xABcx", false],
    ] as const) {
      const body = {
        resourceType: "User",
        userName,
        displayName,
        title,
        active,
        emails: [{ value: `${userName}@x.io` }],
      };
      const created = await scim.call("POST", "/Resources", body, JSON_BODY);
      expect(created.status, created.text).toBe(201);
      ids[userName] = created.json().id;
    }
  });

  const found = (filter: string) => userNamesFound(scim, filter);

  const titled = async (key: string, title: string) => {
    const body = { schemas: [PATCH_OP], Operations: [{ op: "replace", path: "title", value: title }] };
    const changed = await scim.call("PATCH", `/Resources/${ids[key]}`, body, JSON_BODY);
    expect(changed.status, changed.text).toBe(200);
  };

  it.each([
    { filter: 'displayName co "l"', want: ["al"] },
    { filter: 'displayName co "AL"', want: ["al"] },
    { filter: 'displayName co "b z"', want: ["bob"] },
    { filter: 'title co "ab"', want: ["al", "bob", "cyd"] },
    { filter: 'title co "abc"', want: ["al", "cyd"] },
    { filter: 'title co "abcx"', want: ["cyd"] },
    { filter: 'title ew "bc"', want: ["al"] },
    { filter: 'title ew "abc"', want: ["al"] },
    { filter: 'title sw "ab"', want: ["al", "bob"] },
    { filter: 'title eq "ab"', want: ["bob"] },
    { filter: 'emails co "@x.io"', want: ["al", "bob", "cyd"] },
    { filter: 'emails co "d@"', want: ["cyd"] },
    { filter: "active eq false", want: ["cyd"] },
  ])("finds $want for $filter", async ({ filter, want }) => {
    expect(await found(filter)).toEqual(want);
  });

  // a boolean is no string: among Users alone, `co` on one could match nothing, and is refused
  it.each(['active co "tru"', 'active co "fa"'])("refuses %s over Users (400 invalidFilter)", async (filter) => {
    const answer = await scim.call("GET", `/Resources?resourcetypes=User&filter=${encodeURIComponent(filter)}`);
    expect(answer.status, answer.text).toBe(400);
    expect(answer.json()).toMatchObject({ code: "invalid_filter" });
  });

  it("follows values that grow past, and shrink under, three characters, and a delete", async () => {
    await titled("bob", "abd");
    await titled("al", "zz");
    expect(await found('title co "abd"')).toEqual(["bob"]);
    expect(await found('title co "abc"')).toEqual(["cyd"]);
    expect(await found('title co "z"')).toEqual(["al"]);
    const gone = await scim.call("DELETE", `/Resources/${ids.cyd}`);
    expect(gone.status, gone.text).toBe(204);
    expect(await found('title co "abc"')).toEqual([]);
    expect(await found('title co "ab"')).toEqual(["bob"]);
    if (name === "SQLite") {
      const db = scim.server.app.services.store.db;
      // the index is consistent in itself: no row was deleted from it that it never held
      await sql`insert into resource_values_trigram (resource_values_trigram) values ('integrity-check')`.execute(db);
      const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(db);
      expect(check.rows).toEqual([{ integrity_check: "ok" }]);
    }
  });
});

describe("migration 0032 on SQLite", () => {
  it("keeps the strings of three characters or more in the trigram index, and nothing else", async () => {
    const root = await makeDataDir();
    const store = await openStore({ dataDir: root });
    try {
      await migrateTo(store.db, "sqlite", "0031_event_counts_per_statement");
      await sql`insert into resources (id, resource_type, attributes, created_at, updated_at, version)
        values ('u1', 'User', '{}', '2026-01-01', '2026-01-01', 1)`.execute(store.db);
      await sql`insert into resource_values (resource_id, path, elem, kind, text_value, num_value) values
        ('u1', 'emails', 0, 'e', null, null), ('u1', 'emails.value', 0, 's', 'ann@dept3.example.com', null),
        ('u1', 'title', null, 's', 'ab', null), ('u1', 'nickname', null, 's', 'ann', null),
        ('u1', 'active', null, 'b', 'true', null), ('u1', 'floor', null, 'n', null, 3)`.execute(store.db);
      // up to 0032 alone: a later migration (0042) adds rows of its own to a User's values
      expect((await migrateTo(store.db, "sqlite", "0032_value_trigram_strings"))[0]).toBe("0032_value_trigram_strings");
      const indexed = await sql<{ path: string }>`select v.path from resource_values_trigram_docsize d
        join resource_values v on v.id = d.id order by v.path`.execute(store.db);
      expect(indexed.rows).toEqual([{ path: "emails.value" }, { path: "nickname" }]);
      const matching = async (phrase: string) =>
        (
          await sql<{ path: string }>`select v.path from resource_values_trigram
            cross join resource_values v on v.id = resource_values_trigram.rowid
            where resource_values_trigram match ${phrase}`.execute(store.db)
        ).rows.map((row) => row.path);
      expect(await matching('"dept3"')).toEqual(["emails.value"]);
      expect(await matching('"ann"')).toEqual(["emails.value", "nickname"]);
      // the cascade of a deleted resource takes what was indexed out, and only that
      await sql`delete from resources where id = 'u1'`.execute(store.db);
      expect(await matching('"ann"')).toEqual([]);
      await sql`insert into resource_values_trigram (resource_values_trigram) values ('integrity-check')`.execute(
        store.db,
      );
      const left = await sql<{ n: number }>`select count(*) as n from resource_values_trigram_docsize`.execute(
        store.db,
      );
      expect(left.rows).toEqual([{ n: 0 }]);
    } finally {
      await store.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
