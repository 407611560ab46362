import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

/** The values the SQLite trigram index holds: those a `co` or `ew` filter asks it for. */
const INDEXED = (row: string) => sql.raw(`${row}.kind = 's' and length(${row}.text_value) >= 3`);

export const valueTrigramStrings: Migration = {
  async up(db: Kysely<unknown>) {
    // 0027 indexed every value's trigrams, a write of a User paying for its booleans, numbers,
    // array markers and short strings too (an indexed insert cost about three plain ones). The
    // index answers only `co` and `ew` of three characters or more, which compare strings alone
    // (kind 's'): a shorter needle, or any other kind, is read without it (resources-target.ts).
    // So it now holds the strings of three characters or more, and nothing else. PostgreSQL's
    // GIN index (0026) is left as it is.
    if (db.getExecutor().adapter instanceof PostgresAdapter) return;
    await sql`drop trigger resource_values_trigram_insert`.execute(db);
    await sql`drop trigger resource_values_trigram_delete`.execute(db);
    // 'rebuild' would index every row of the content table again: emptied, then filled by hand
    await sql`insert into resource_values_trigram (resource_values_trigram) values ('delete-all')`.execute(db);
    await sql`insert into resource_values_trigram (rowid, text_value)
      select id, text_value from resource_values v where ${INDEXED("v")}`.execute(db);
    // a row the index never held must not be deleted from it (that would corrupt an FTS5 index)
    await sql`create trigger resource_values_trigram_insert after insert on resource_values
      when ${INDEXED("new")} begin
      insert into resource_values_trigram (rowid, text_value) values (new.id, new.text_value);
    end`.execute(db);
    await sql`create trigger resource_values_trigram_delete after delete on resource_values
      when ${INDEXED("old")} begin
      insert into resource_values_trigram (resource_values_trigram, rowid, text_value) values ('delete', old.id, old.text_value);
    end`.execute(db);
  },
};
