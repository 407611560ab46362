import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";
import type { ResourceValuesTable } from "../schema.js";
import { SEARCH_PATH, SEARCHED_PATHS, searchRows } from "../user-search-text.js";

/** Users whose search rows one statement of the backfill writes. */
const PAGE = 1000;

export const userSearchRows: Migration = {
  async up(db: Kysely<unknown>) {
    // `users search` now reads each User's searched values folded (accents stripped, `Müller`
    // found by `muller`) from rows of its own, written with the values (resources-repo.ts): the
    // existing Users get theirs, from the values they hold, a page of Users at a time.
    let after = "";
    for (;;) {
      const { rows: users } = await sql<{ id: string }>`select id from resources
        where resource_type = 'User' and id > ${after} order by id limit ${PAGE}`.execute(db);
      if (users.length === 0) break;
      const ids = users.map((user) => user.id);
      after = ids[ids.length - 1] ?? after;
      const { rows: values } =
        await sql<ResourceValuesTable>`select resource_id, path, elem, kind, text_value, num_value
        from resource_values where resource_id in (${sql.join(ids)}) and path in (${sql.join([...SEARCHED_PATHS])})
        order by resource_id, path, elem`.execute(db);
      const byUser = new Map<string, ResourceValuesTable[]>(ids.map((id) => [id, []]));
      for (const value of values) byUser.get(value.resource_id)?.push(value);
      const rows = [...byUser].flatMap(([id, own]) => searchRows(own).map((row) => ({ ...row, resource_id: id })));
      for (let i = 0; i < rows.length; i += 4000) {
        const part = rows
          .slice(i, i + 4000)
          .map(
            (row) =>
              sql`(${row.resource_id}, ${row.path}, ${row.elem}, ${row.kind}, ${row.text_value}, ${row.num_value})`,
          );
        await sql`insert into resource_values (resource_id, path, elem, kind, text_value, num_value)
          values ${sql.join(part)}`.execute(db);
      }
    }
    // PostgreSQL: a trigram index of the search rows alone, one a User, where 0026's holds every
    // value: the trigrams every user name shares (`use` of `user-…`) list a row a User here, not
    // one a value holding them. Without the pending list a write fills until a vacuum merges it,
    // which every search would read in full. SQLite's trigram index (0027, 0032) holds them already.
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    // the planner, which has not seen the new rows, took them for one and walked them all
    await sql`analyze resource_values`.execute(db);
    await sql`savepoint search_trigram`.execute(db);
    try {
      await sql`create extension if not exists pg_trgm`.execute(db);
      await sql`create index resource_values_search_idx on resource_values using gin (text_value gin_trgm_ops)
        with (fastupdate = off) where path = ${sql.lit(SEARCH_PATH)}`.execute(db);
    } catch {
      // without pg_trgm, as for 0026: docs/operations.md says how a superuser adds it
      await sql`rollback to savepoint search_trigram`.execute(db);
    }
  },
};
