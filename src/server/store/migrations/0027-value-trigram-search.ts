import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

export const valueTrigramSearch: Migration = {
  async up(db: Kysely<unknown>) {
    // SQLite's counterpart of 0026: an FTS5 index with the trigram tokenizer over the values,
    // which a `co` filter asks for the rows that may contain its text before LIKE decides. An
    // external-content index names rows by their rowid, which VACUUM may renumber in a table
    // without an INTEGER PRIMARY KEY: the values table is made again with one.
    if (db.getExecutor().adapter instanceof PostgresAdapter) return;
    // in the migration's transaction (our SQLite dialect runs DDL in one): all of it or none
    await sql`create table resource_values_keyed (
      id integer primary key,
      resource_id text not null references resources (id) on delete cascade,
      path text not null,
      elem integer,
      kind text not null,
      text_value text,
      num_value double precision)`.execute(db);
    await sql`insert into resource_values_keyed (resource_id, path, elem, kind, text_value, num_value)
      select resource_id, path, elem, kind, text_value, num_value from resource_values`.execute(db);
    await sql`drop table resource_values`.execute(db);
    await sql`alter table resource_values_keyed rename to resource_values`.execute(db);
    await sql`create index resource_values_text_idx on resource_values (path, text_value)`.execute(db);
    await sql`create index resource_values_num_idx on resource_values (path, num_value)`.execute(db);
    await sql`create index resource_values_owner_idx on resource_values (resource_id, path)`.execute(db);
    await sql`create index resource_values_prefix_idx on resource_values (path, text_value collate nocase)`.execute(db);
    await sql`create virtual table resource_values_trigram using fts5(text_value, content = 'resource_values',
      content_rowid = 'id', tokenize = 'trigram')`.execute(db);
    await sql`insert into resource_values_trigram (resource_values_trigram) values ('rebuild')`.execute(db);
    // values are only inserted and deleted (a write replaces all of a resource's values)
    await sql`create trigger resource_values_trigram_insert after insert on resource_values begin
      insert into resource_values_trigram (rowid, text_value) values (new.id, new.text_value);
    end`.execute(db);
    await sql`create trigger resource_values_trigram_delete after delete on resource_values begin
      insert into resource_values_trigram (resource_values_trigram, rowid, text_value) values ('delete', old.id, old.text_value);
    end`.execute(db);
  },
};
