import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

export const valueTrigramIndex: Migration = {
  async up(db: Kysely<unknown>) {
    // `co` compiles to LIKE '%text%', which no btree answers: `emails co "@dept3.example.com"`
    // read every e-mail of the directory (740 ms at 100,000 Users; 1.2 ms through a trigram
    // index). On PostgreSQL, pg_trgm's GIN index answers it, where the role that migrates may
    // create the extension (it is trusted: the database's owner may); elsewhere the migration
    // goes on without it, and docs/operations.md says how a superuser adds it. SQLite: 0027.
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    await sql`savepoint trigram`.execute(db);
    try {
      await sql`create extension if not exists pg_trgm`.execute(db);
      await sql`create index resource_values_trigram_idx on resource_values using gin (text_value gin_trgm_ops)`.execute(
        db,
      );
    } catch {
      // not allowed, or the extension lives in a schema off the search path
      await sql`rollback to savepoint trigram`.execute(db);
    }
  },
};
