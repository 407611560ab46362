import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

export const eventCountsPerStatement: Migration = {
  async up(db: Kysely<unknown>) {
    // PostgreSQL only: SQLite updates its count rows in place.
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    // A count kept by a row trigger writes a new version of its count row for every event, and
    // the versions one transaction writes cannot be pruned before it commits: an import writing
    // 500 events a transaction left the 16-row events_count 4,000 pages long at a million
    // events, and every list's total read them all (2 ms warm, 78 ms cold). Statement triggers
    // with transition tables write one version per statement, whatever its number of rows.
    await sql`drop trigger events_count_change on events`.execute(db);
    await sql`drop trigger events_type_count_change on events`.execute(db);
    await sql`drop function events_count_change()`.execute(db);
    await sql`drop function events_type_count_change()`.execute(db);
    for (const [change, rows, sign] of [
      ["insert", "new_rows", "+"],
      ["delete", "old_rows", "-"],
    ] as const) {
      // rows an atomic import keeps hidden are counted when it reveals them (revealImportRows)
      await sql`create function ${sql.raw(`events_counts_${change}`)}() returns trigger language plpgsql as $$
        declare
          own_slot integer := pg_backend_pid() % 16;
          changed bigint;
        begin
          select count(*) into changed from ${sql.raw(rows)} where import_id is null;
          if changed = 0 then
            return null;
          end if;
          update events_count set n = n ${sql.raw(sign)} changed where id = own_slot;
          insert into events_type_count as c (type_key, slot, n)
            select lower(type), own_slot, ${sql.raw(sign)}count(*) from ${sql.raw(rows)}
            where import_id is null and type is not null group by lower(type)
            on conflict (type_key, slot) do update set n = c.n + excluded.n;
          return null;
        end $$`.execute(db);
      await sql`create trigger ${sql.raw(`events_counts_${change}`)} after ${sql.raw(change)} on events
        referencing ${sql.raw(change === "insert" ? "new" : "old")} table as ${sql.raw(rows)}
        for each statement execute function ${sql.raw(`events_counts_${change}`)}()`.execute(db);
    }
    // a change of type is one event at a time: a row trigger, called only when the type changes
    await sql`create function events_type_count_update() returns trigger language plpgsql as $$
      declare
        own_slot integer := pg_backend_pid() % 16;
      begin
        if old.type is not null then
          insert into events_type_count as c (type_key, slot, n) values (lower(old.type), own_slot, -1)
            on conflict (type_key, slot) do update set n = c.n - 1;
        end if;
        if new.type is not null then
          insert into events_type_count as c (type_key, slot, n) values (lower(new.type), own_slot, 1)
            on conflict (type_key, slot) do update set n = c.n + 1;
        end if;
        return null;
      end $$`.execute(db);
    await sql`create trigger events_type_count_update after update of type on events
      for each row when (old.import_id is null and lower(old.type) is distinct from lower(new.type))
      execute function events_type_count_update()`.execute(db);
    // rewrite both count tables: a truncated table starts from one page, whatever its history
    for (const table of ["events_count", "events_type_count"]) {
      await sql`create temporary table count_copy as select * from ${sql.table(table)}`.execute(db);
      await sql`truncate ${sql.table(table)}`.execute(db);
      await sql`insert into ${sql.table(table)} select * from count_copy`.execute(db);
      await sql`drop table count_copy`.execute(db);
    }
  },
};
