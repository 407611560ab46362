import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

export const resourceTypeCount: Migration = {
  async up(db: Kysely<unknown>) {
    // The staff directory at 100,000 Users: the total of every list counted each User, and the
    // first page sorted by userName (or a page deep in the default order) sorted them all.
    // Triggers keep the number of resources of each type in the writing transaction (on
    // PostgreSQL in slots per connection, as events_type_count does), and two indexes give the
    // orders of a list of one type: by its user name (Users) and by id.
    await sql`create table resource_type_count (resource_type text not null, slot integer not null, n bigint not null,
      primary key (resource_type, slot))`.execute(db);
    await sql`insert into resource_type_count (resource_type, slot, n)
      select resource_type, 0, count(*) from resources group by resource_type`.execute(db);
    await db.schema
      .createIndex("resources_type_user_name_idx")
      .on("resources")
      .columns(["resource_type", "user_name_key"])
      .execute();
    await db.schema.createIndex("resources_type_id_idx").on("resources").columns(["resource_type", "id"]).execute();
    // the type's own index is the prefix of both
    await db.schema.dropIndex("resources_resource_type_idx").execute();
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      await sql`create function resource_type_count_change() returns trigger language plpgsql as $$
        declare
          own_slot integer := pg_backend_pid() % 16;
        begin
          if tg_op = 'DELETE' then
            insert into resource_type_count as c (resource_type, slot, n) values (old.resource_type, own_slot, -1)
              on conflict (resource_type, slot) do update set n = c.n - 1;
          else
            insert into resource_type_count as c (resource_type, slot, n) values (new.resource_type, own_slot, 1)
              on conflict (resource_type, slot) do update set n = c.n + 1;
          end if;
          return null;
        end $$`.execute(db);
      await sql`create trigger resource_type_count_change after insert or delete on resources
        for each row execute function resource_type_count_change()`.execute(db);
    } else {
      await sql`create trigger resource_type_count_insert after insert on resources
        begin
          insert into resource_type_count (resource_type, slot, n) values (new.resource_type, 0, 1)
            on conflict (resource_type, slot) do update set n = n + 1;
        end`.execute(db);
      await sql`create trigger resource_type_count_delete after delete on resources
        begin
          update resource_type_count set n = n - 1 where resource_type = old.resource_type and slot = 0;
        end`.execute(db);
    }
  },
};
