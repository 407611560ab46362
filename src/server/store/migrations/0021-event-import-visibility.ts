import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

export const eventImportVisibility: Migration = {
  async up(db: Kysely<unknown>) {
    // An atomic import writes its events in short transactions, hidden (import_id set), and
    // shows them all at once by clearing import_id: other writers wait for a chunk at a time,
    // never for the whole import. Readers, the counts and the triggers see visible rows only.
    await db.schema.alterTable("events").addColumn("import_id", "text").execute();
    await sql`create index events_import_idx on events (import_id) where import_id is not null`.execute(db);
    await db.schema
      .alterTable("event_imports")
      .addColumn("state", "text", (c) => c.notNull().defaultTo("open"))
      .execute();
    await db.schema
      .alterTable("event_imports")
      .addColumn("staged_bytes", "bigint", (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable("event_imports").addColumn("commit_started_at", "text").execute();
    await db.schema.createIndex("event_imports_owner_idx").on("event_imports").column("created_by").execute();
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      await sql`create or replace function events_count_change() returns trigger language plpgsql as $$
        begin
          if (tg_op = 'INSERT' and new.import_id is not null) or (tg_op = 'DELETE' and old.import_id is not null) then
            return null;
          end if;
          update events_count set n = n + (case when tg_op = 'INSERT' then 1 else -1 end)
            where id = pg_backend_pid() % 16;
          return null;
        end $$`.execute(db);
      await sql`create or replace function events_type_count_change() returns trigger language plpgsql as $$
        declare
          own_slot integer := pg_backend_pid() % 16;
        begin
          if (tg_op = 'INSERT' and new.import_id is not null) or (tg_op <> 'INSERT' and old.import_id is not null) then
            return null;
          end if;
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
      return;
    }
    for (const trigger of [
      "count_insert",
      "count_delete",
      "type_count_insert",
      "type_count_delete",
      "type_count_update",
    ]) {
      await sql`drop trigger ${sql.raw(`events_${trigger}`)}`.execute(db);
    }
    await sql`create trigger events_count_insert after insert on events when new.import_id is null
      begin update events_count set n = n + 1 where id = 0; end`.execute(db);
    await sql`create trigger events_count_delete after delete on events when old.import_id is null
      begin update events_count set n = n - 1 where id = 0; end`.execute(db);
    await sql`create trigger events_type_count_insert after insert on events
      when new.type is not null and new.import_id is null
      begin
        insert into events_type_count (type_key, slot, n) values (lower(new.type), 0, 1)
          on conflict (type_key, slot) do update set n = n + 1;
      end`.execute(db);
    await sql`create trigger events_type_count_delete after delete on events
      when old.type is not null and old.import_id is null
      begin
        update events_type_count set n = n - 1 where type_key = lower(old.type) and slot = 0;
      end`.execute(db);
    await sql`create trigger events_type_count_update after update of type on events
      when lower(old.type) is not lower(new.type) and old.import_id is null
      begin
        update events_type_count set n = n - 1 where type_key = lower(old.type) and slot = 0;
        insert into events_type_count (type_key, slot, n) select lower(new.type), 0, 1 where new.type is not null
          on conflict (type_key, slot) do update set n = n + 1;
      end`.execute(db);
  },
};
