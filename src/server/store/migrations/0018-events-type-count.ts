import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

export const eventsTypeCount: Migration = {
  async up(db: Kysely<unknown>) {
    // The total of a page filtered by `type eq "…"` (the list's commonest filter) counted every
    // matching index entry: a fifth of a million events took longer than the page itself.
    // Triggers keep the number of events of each type (by lower(type), the key the filter
    // compares) in the writing transaction, as events_count does for all of them; on
    // PostgreSQL in slots per connection, for the same reason.
    await sql`create table events_type_count (type_key text not null, slot integer not null, n bigint not null,
      primary key (type_key, slot))`.execute(db);
    await sql`insert into events_type_count (type_key, slot, n)
      select lower(type), 0, count(*) from events where type is not null group by lower(type)`.execute(db);
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      await sql`create function events_type_count_change() returns trigger language plpgsql as $$
        declare
          own_slot integer := pg_backend_pid() % 16;
        begin
          if tg_op = 'UPDATE' and lower(old.type) is not distinct from lower(new.type) then
            return null;
          end if;
          if tg_op in ('DELETE', 'UPDATE') and old.type is not null then
            insert into events_type_count as c (type_key, slot, n) values (lower(old.type), own_slot, -1)
              on conflict (type_key, slot) do update set n = c.n - 1;
          end if;
          if tg_op in ('INSERT', 'UPDATE') and new.type is not null then
            insert into events_type_count as c (type_key, slot, n) values (lower(new.type), own_slot, 1)
              on conflict (type_key, slot) do update set n = c.n + 1;
          end if;
          return null;
        end $$`.execute(db);
      await sql`create trigger events_type_count_change after insert or delete or update of type on events
        for each row execute function events_type_count_change()`.execute(db);
    } else {
      // one writer at a time on SQLite: one slot; a type's row exists from its first event on
      await sql`create trigger events_type_count_insert after insert on events when new.type is not null
        begin
          insert into events_type_count (type_key, slot, n) values (lower(new.type), 0, 1)
            on conflict (type_key, slot) do update set n = n + 1;
        end`.execute(db);
      await sql`create trigger events_type_count_delete after delete on events when old.type is not null
        begin
          update events_type_count set n = n - 1 where type_key = lower(old.type) and slot = 0;
        end`.execute(db);
      await sql`create trigger events_type_count_update after update of type on events
        when lower(old.type) is not lower(new.type)
        begin
          update events_type_count set n = n - 1 where type_key = lower(old.type) and slot = 0;
          insert into events_type_count (type_key, slot, n) select lower(new.type), 0, 1 where new.type is not null
            on conflict (type_key, slot) do update set n = n + 1;
        end`.execute(db);
    }
  },
};
