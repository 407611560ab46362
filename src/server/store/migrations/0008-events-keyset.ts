import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

export const eventsKeyset: Migration = {
  async up(db: Kysely<unknown>) {
    // keyset pages walk an index in the list's order: these are the orders 0001's indexes do not
    // serve (plans in docs/events-keyset.md). -startsAt keeps code ascending as its tie-breaker,
    // so it needs its own mixed-direction index; a type filter compares lower(type).
    await sql`create index events_starts_at_desc_idx on events (starts_at desc, code_key)`.execute(db);
    // type itself last: the filter also tests `type is not null`, so the filtered count reads the index alone
    await sql`create index events_type_keyset_idx on events (lower(type), starts_at, code_key, type)`.execute(db);
    // the unfiltered total of every page-based list: a count(*) of a million rows is a scan;
    // triggers keep it exact in the writing transaction, whoever writes. The total is the sum of
    // slots: on PostgreSQL each connection adds to its own (backend pid mod 16), so that writers
    // on other connections and instances (a long import transaction too) do not queue on one row
    await sql`create table events_count (id integer primary key, n bigint not null)`.execute(db);
    await sql`insert into events_count (id, n) select 0, count(*) from events`.execute(db);
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      await sql`insert into events_count (id, n) select slot, 0 from generate_series(1, 15) as slot`.execute(db);
      await sql`create function events_count_change() returns trigger language plpgsql as $$
        begin
          update events_count set n = n + (case when tg_op = 'INSERT' then 1 else -1 end)
            where id = pg_backend_pid() % 16;
          return null;
        end $$`.execute(db);
      await sql`create trigger events_count_change after insert or delete on events
        for each row execute function events_count_change()`.execute(db);
    } else {
      // one writer at a time on SQLite: one slot
      await sql`create trigger events_count_insert after insert on events
        begin update events_count set n = n + 1 where id = 0; end`.execute(db);
      await sql`create trigger events_count_delete after delete on events
        begin update events_count set n = n - 1 where id = 0; end`.execute(db);
    }
  },
};
