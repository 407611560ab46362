import { type Kysely, type MigrationProvider, type MigrationResultSet, Migrator, sql } from "kysely";
import { MIGRATIONS } from "./migrations/index.js";
import type { Schema } from "./schema.js";

// Runs the migrations of migrations/ on a database, through kysely's migrator and its
// kysely_migration bookkeeping table.

class ImportedProvider implements MigrationProvider {
  async getMigrations() {
    return MIGRATIONS;
  }
}

/**
 * Whether every migration has run already: the common case, checked with one read. Kysely's
 * migrator first introspects every table of the schema and takes its lock, which cost an
 * embedded command more than the command itself. Anything else (no bookkeeping table yet, a
 * migration missing, or one this build does not know) is left to the migrator, as before.
 */
async function isUpToDate(db: Kysely<Schema>): Promise<boolean> {
  let done: string[];
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    done = rows.map((row) => row.name);
  } catch {
    return false;
  }
  const known = Object.keys(MIGRATIONS);
  return done.length === known.length && known.every((name) => done.includes(name));
}

export async function migrateToLatest(db: Kysely<Schema>, dialect: "sqlite" | "postgres"): Promise<string[]> {
  if (await isUpToDate(db)) return [];
  return applied(await (await migratorFor(db, dialect)).migrateToLatest());
}

/** The names of every migration, in the order they run. */
export const migrationNames = (): string[] => Object.keys(MIGRATIONS).sort();

/** Migrates a database up to the named migration: as an older build left it (tests of a migration). */
export async function migrateTo(db: Kysely<Schema>, dialect: "sqlite" | "postgres", name: string): Promise<string[]> {
  return applied(await (await migratorFor(db, dialect)).migrateTo(name));
}

async function migratorFor(db: Kysely<Schema>, dialect: "sqlite" | "postgres"): Promise<Migrator> {
  // on PostgreSQL the bookkeeping tables go where ours go (search_path), not always into public
  const migrationTableSchema =
    dialect === "postgres"
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  return new Migrator({
    // biome-ignore lint/suspicious/noExplicitAny: the migrator works on an untyped schema
    db: db as Kysely<any>,
    provider: new ImportedProvider(),
    ...(migrationTableSchema && { migrationTableSchema }),
  });
}

function applied({ error, results }: MigrationResultSet): string[] {
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
