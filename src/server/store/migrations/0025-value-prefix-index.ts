import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

export const valuePrefixIndex: Migration = {
  async up(db: Kysely<unknown>) {
    // `sw` compiles to LIKE 'prefix%', which neither store reads from the (path, text_value) index:
    // SQLite's LIKE is case-insensitive and so uses only an index in NOCASE order, and PostgreSQL
    // uses a btree for LIKE only in C order (text_pattern_ops) unless the database's collation is
    // C. Without it, `userName sw "…"` read every userName of the directory.
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      await sql`create index resource_values_prefix_idx on resource_values (path, text_value text_pattern_ops)`.execute(
        db,
      );
    } else {
      await sql`create index resource_values_prefix_idx on resource_values (path, text_value collate nocase)`.execute(
        db,
      );
    }
  },
};
