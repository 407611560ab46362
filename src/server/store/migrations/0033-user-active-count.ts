import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

/**
 * `active eq false` at 100,000 Users: SCIM's `totalResults` counted every match, and the page
 * read every match's value and resource to sort them by id (2.5x on SQLite and 4.7x on
 * PostgreSQL against 1,000 Users). A User's `active` (a boolean or absent: the User schema is
 * strict) is now also a column the database derives from its attributes, whatever writes them,
 * indexed by type, value and id, so that a page of one value walks the index in the default
 * order and stops at the page; and triggers keep the number of Users of each value, as 0024
 * keeps the number of each type (resources-repo.ts reads it for a filter that is `active eq`
 * alone).
 */
export const userActiveCount: Migration = {
  async up(db: Kysely<unknown>) {
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    // 'true' or 'false' for a User whose `active` is that boolean, null otherwise: as the filter
    // compares a boolean value (compile.ts)
    const derived = postgres
      ? sql`text generated always as (case when resource_type = 'User' then
          case attributes::jsonb -> 'active' when 'true'::jsonb then 'true' when 'false'::jsonb then 'false' end end) stored`
      : sql`text generated always as (case when resource_type = 'User' then
          case json_type(attributes, '$.active') when 'true' then 'true' when 'false' then 'false' end end) virtual`;
    await sql`alter table resources add column user_active ${derived}`.execute(db);
    await sql`create index resources_type_active_id_idx on resources (resource_type, user_active, id)`.execute(db);
    await sql`create table user_active_count (active text not null, slot integer not null, n bigint not null,
      primary key (active, slot))`.execute(db);
    await sql`insert into user_active_count (active, slot, n)
      select user_active, 0, count(*) from resources where user_active is not null group by user_active`.execute(db);
    if (postgres) {
      // statement triggers, one version of a count row per statement whatever its rows (0031);
      // slots per connection, so that concurrent writers do not wait on one row
      for (const [change, rows, sign] of [
        ["insert", "new_rows", "+"],
        ["delete", "old_rows", "-"],
      ] as const) {
        await sql`create function ${sql.raw(`user_active_count_${change}`)}() returns trigger language plpgsql as $$
          begin
            insert into user_active_count as c (active, slot, n)
              select user_active, pg_backend_pid() % 16, ${sql.raw(sign)}count(*) from ${sql.raw(rows)}
              where user_active is not null group by user_active
              on conflict (active, slot) do update set n = c.n + excluded.n;
            return null;
          end $$`.execute(db);
        await sql`create trigger ${sql.raw(`user_active_count_${change}`)} after ${sql.raw(change)} on resources
          referencing ${sql.raw(change === "insert" ? "new" : "old")} table as ${sql.raw(rows)}
          for each statement execute function ${sql.raw(`user_active_count_${change}`)}()`.execute(db);
      }
      // a change of `active` is one User at a time: a row trigger, called only when it changes
      await sql`create function user_active_count_update() returns trigger language plpgsql as $$
        declare
          own_slot integer := pg_backend_pid() % 16;
        begin
          if old.user_active is not null then
            insert into user_active_count as c (active, slot, n) values (old.user_active, own_slot, -1)
              on conflict (active, slot) do update set n = c.n - 1;
          end if;
          if new.user_active is not null then
            insert into user_active_count as c (active, slot, n) values (new.user_active, own_slot, 1)
              on conflict (active, slot) do update set n = c.n + 1;
          end if;
          return null;
        end $$`.execute(db);
      await sql`create trigger user_active_count_update after update on resources
        for each row when (old.user_active is distinct from new.user_active)
        execute function user_active_count_update()`.execute(db);
      return;
    }
    await sql`create trigger user_active_count_insert after insert on resources
      when new.user_active is not null begin
        insert into user_active_count (active, slot, n) values (new.user_active, 0, 1)
          on conflict (active, slot) do update set n = n + 1;
      end`.execute(db);
    await sql`create trigger user_active_count_delete after delete on resources
      when old.user_active is not null begin
        update user_active_count set n = n - 1 where active = old.user_active and slot = 0;
      end`.execute(db);
    await sql`create trigger user_active_count_update after update of attributes on resources
      when old.user_active is not new.user_active begin
        update user_active_count set n = n - 1 where active = old.user_active and slot = 0;
        insert into user_active_count (active, slot, n) select new.user_active, 0, 1 where new.user_active is not null
          on conflict (active, slot) do update set n = n + 1;
      end`.execute(db);
  },
};
