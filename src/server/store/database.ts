import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import type { Schema } from "./schema.js";

export interface Store {
  db: Kysely<Schema>;
  dialect: "sqlite" | "postgres";
  /** where the data lives, for messages (never contains a password) */
  describe: string;
  close(): Promise<void>;
}

export interface StoreOptions {
  dataDir: string;
  /** `postgres://...` selects PostgreSQL; a file path or `sqlite:` URL selects SQLite; default `<dataDir>/bizctl.db` */
  databaseUrl?: string;
}

export async function openStore(options: StoreOptions): Promise<Store> {
  const url = options.databaseUrl;
  if (url && /^postgres(ql)?:\/\//i.test(url)) {
    const { default: pg } = await import("pg");
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: "postgres", describe: redactUrl(url), close: () => db.destroy() };
  }
  const file = url ? url.replace(/^sqlite:(\/\/)?/i, "") : join(options.dataDir, "bizctl.db");
  if (!url) mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const { default: Database } = await import("better-sqlite3");
  const sqlite = new Database(file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.pragma("synchronous = NORMAL");
  const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return { db, dialect: "sqlite", describe: file, close: () => db.destroy() };
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "postgres://…";
  }
}

type SqliteDatabase = import("better-sqlite3").Database;

/**
 * Kysely prepares every query anew; preparing costs more than running an indexed read. The
 * statements are kept by their SQL text (which holds no values: those are bound parameters).
 */
function withStatementCache(sqlite: SqliteDatabase): SqliteDatabase {
  const cache = new Map<string, ReturnType<SqliteDatabase["prepare"]>>();
  const prepare = sqlite.prepare.bind(sqlite);
  return new Proxy(sqlite, {
    get(target, property) {
      if (property !== "prepare") {
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (sql: string) => {
        let statement = cache.get(sql);
        if (!statement) {
          if (cache.size >= 500) cache.delete(cache.keys().next().value as string);
          statement = prepare(sql);
          cache.set(sql, statement);
        }
        return statement;
      };
    },
  });
}
