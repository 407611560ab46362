import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  Kysely,
  PostgresDialect,
  SqliteAdapter,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  sql,
} from "kysely";
import { ConfigurationError } from "../configuration-error.js";
import type { StoreObserver } from "../metrics/metrics.js";
import { ownerOnly } from "./file-modes.js";
import { observe, observedDialect, queryLog } from "./observer.js";
import { runDirectly } from "./precompiled.js";
import type { Schema } from "./schema.js";

export interface Store {
  db: Kysely<Schema>;
  dialect: "sqlite" | "postgres";
  /** where the data lives, for messages (never contains a password) */
  describe: string;
  close(): Promise<void>;
  /**
   * SQLite only: a consistent copy of the database into `file`, an existing file (even empty)
   * that it overwrites, through SQLite's online backup; safe while other processes write.
   */
  backup?(file: string): Promise<{ pages: number }>;
  /** PostgreSQL: the connection pool's use now (for metrics) */
  pool?(): { idle: number; used: number; pending: number };
}

export interface StoreOptions {
  dataDir: string;
  /** `postgres://...` selects PostgreSQL; a file path or `sqlite:` URL selects SQLite; default `<dataDir>/bizctl.db` */
  databaseUrl?: string;
  /** SQLite: refuse a missing database file instead of creating one (and the data dir) */
  mustExist?: boolean;
  /** SQLite: the connection's page cache in KiB (default better-sqlite3's 16 MiB) */
  cacheKiB?: number;
  /** told of every statement, transaction and group commit (metrics); nothing is timed without it */
  observer?: StoreObserver;
  /** told of the paths in the data dir (and of a SQLite file) that other users could read, now owner-only */
  onTightened?: (paths: string[]) => void;
}

/** A Kysely on `dialect`, observed when the options ask for it. */
function kysely(dialect: Dialect, observer: StoreObserver | undefined): Kysely<Schema> {
  if (!observer) return new Kysely<Schema>({ dialect });
  const db = new Kysely<Schema>({ dialect: observedDialect(dialect, observer), log: queryLog(observer) });
  observe(db, observer);
  return db;
}

const isPostgres = (url: string | undefined) => Boolean(url && /^postgres(ql)?:\/\//i.test(url));

/** The SQLite file the options name (undefined for PostgreSQL). */
export function sqliteFile(options: StoreOptions): string | undefined {
  const url = options.databaseUrl;
  if (isPostgres(url)) return undefined;
  return url ? url.replace(/^sqlite:(\/\/)?/i, "") : join(options.dataDir, "bizctl.db");
}

/**
 * Whether `server init` has made a user here. Asked before migrating, so that a refused start
 * creates no table: a database without the resources table has no users either.
 */
export async function hasUsers(store: Store): Promise<boolean> {
  try {
    const row = await store.db
      .selectFrom("resources")
      .select("id")
      .where("resource_type", "=", "User")
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown };
    if (e.code === "42P01" || /no such table/i.test(String(e.message))) return false;
    throw error;
  }
}

/**
 * The addon file npm's build of better-sqlite3 makes. Handed to it, the `bindings` package does
 * not probe a dozen folders for it at every start; with another layout (no such file),
 * better-sqlite3 searches as it always did.
 */
function builtAddon(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve("better-sqlite3/build/Release/better_sqlite3.node");
  } catch {
    return undefined;
  }
}

export async function openStore(options: StoreOptions): Promise<Store> {
  const url = options.databaseUrl;
  const ownerOnlyFiles = (file: string | undefined, create: boolean) => {
    const tightened = ownerOnly(options.dataDir, file, create);
    if (tightened.length > 0) options.onTightened?.(tightened);
  };
  if (url && isPostgres(url)) {
    ownerOnlyFiles(undefined, false);
    const { default: pg } = await import("pg");
    // a dead server fails a request within seconds instead of queueing it for ever
    const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5000 });
    // a connection the server closed (a restart) is dropped and replaced, and the query on it
    // fails (a 503); unhandled, the 'error' event of the pool, or of a connection in use between
    // two queries, would end the process
    pool.on("error", () => {});
    pool.on("connect", (client) => client.on("error", () => {}));
    const db = kysely(new PostgresDialect({ pool }), options.observer);
    return {
      db,
      dialect: "postgres",
      describe: redactUrl(url),
      close: () => db.destroy(),
      pool: () => ({ idle: pool.idleCount, used: pool.totalCount - pool.idleCount, pending: pool.waitingCount }),
    };
  }
  const file = sqliteFile(options) as string;
  if (options.mustExist && !existsSync(file)) {
    throw new ConfigurationError(`There is no database at ${file}: check --data-dir and --database.`);
  }
  if (!url && !options.mustExist) mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  ownerOnlyFiles(file, !options.mustExist);
  const { default: Database } = await import("better-sqlite3");
  const nativeBinding = builtAddon();
  const sqlite = new Database(file, {
    fileMustExist: options.mustExist ?? false,
    ...(nativeBinding && { nativeBinding }),
  });
  await turnWalOn(sqlite);
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.pragma("synchronous = NORMAL");
  // what is deleted or overwritten is zeroed, not left in free pages for a copy of the file to show
  sqlite.pragma("secure_delete = ON");
  // a checkpoint copies each page changed since the last one back into the database file, once
  // however often it changed: at SQLite's default (1000 pages, 4 MB of WAL) the event, index and
  // audit pages of a write were copied again every few hundred writes, a third of the cost of a
  // create. 10 000 pages keep at most 40 MB of WAL beside the database; the last connection to
  // close still checkpoints and removes it.
  sqlite.pragma("wal_autocheckpoint = 10000");
  if (options.cacheKiB !== undefined) sqlite.pragma(`cache_size = -${Math.floor(options.cacheKiB)}`);
  const { database, prepare } = withStatementCache(sqlite);
  const db = kysely(new ImmediateSqliteDialect({ database }), options.observer);
  runDirectly(db, {
    prepare,
    inTransaction: () => sqlite.inTransaction,
    ...(options.observer && { observer: options.observer }),
  });
  return {
    db,
    dialect: "sqlite",
    describe: file,
    close: () => db.destroy(),
    // one step for every page: a backup copied in small steps starts over whenever another
    // process writes in between, and never ends under steady writes; a single step reads one
    // snapshot, which in WAL mode does not hold the writers up
    backup: async (target) => {
      const { totalPages } = await sqlite.backup(target, { progress: () => 0x7fffffff });
      // the copy keeps the source's WAL flag; a rollback journal makes it one self-contained file
      // that opens read-only without creating -wal and -shm files beside it (a start turns WAL on again)
      const copy = new Database(target);
      try {
        copy.pragma("journal_mode = DELETE");
      } finally {
        copy.close();
      }
      return { pages: totalPages };
    },
  };
}

/**
 * Turns WAL on, waiting for the lock this takes. The switch of a new file's journal mode does not
 * wait under busy_timeout: two processes opening one new file at once (two `server init`) made
 * one of them fail at once with SQLITE_BUSY.
 */
async function turnWalOn(sqlite: SqliteDatabase, waitMs = 5000): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      sqlite.pragma("journal_mode = WAL");
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() > deadline) throw error;
      await sleep(10 + Math.random() * 40);
    }
  }
}

/**
 * Transactions take SQLite's write lock when they begin (BEGIN IMMEDIATE). A deferred one that
 * reads first and writes later fails at once with SQLITE_BUSY when another process (a worker, the
 * embedded CLI) wrote meanwhile; an immediate one waits its turn under busy_timeout instead.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin immediate"));
  }
}

/**
 * SQLite runs DDL inside transactions, but kysely's adapter says it does not, so its migrator ran
 * each migration bare, with no lock (SQLite's adapter takes none): two processes migrating one
 * new file (two `server init` at once) both created the tables, and one failed with "table
 * already exists". Said true, the migrator reads what has run and runs the rest in one
 * transaction, which begins immediate: a second process waits for the first and finds it done.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly sqliteConfig: SqliteDialectConfig) {
    super(sqliteConfig);
  }

  override createDriver() {
    return new ImmediateSqliteDriver(this.sqliteConfig);
  }

  override createAdapter() {
    return new TransactionalDdlSqliteAdapter();
  }
}

/** One round trip: the database answers (the health check). */
export async function ping(db: Kysely<Schema>): Promise<void> {
  await sql`select 1`.execute(db);
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
type SqliteStatement = ReturnType<SqliteDatabase["prepare"]>;

/**
 * Kysely prepares every query anew; preparing costs more than running an indexed read. The
 * statements are kept by their SQL text (which holds no values: those are bound parameters).
 */
function withStatementCache(sqlite: SqliteDatabase): {
  database: SqliteDatabase;
  prepare: (sql: string) => SqliteStatement;
} {
  const cache = new Map<string, SqliteStatement>();
  const prepareNew = sqlite.prepare.bind(sqlite);
  const prepare = (sql: string) => {
    let statement = cache.get(sql);
    if (!statement) {
      if (cache.size >= 500) cache.delete(cache.keys().next().value as string);
      statement = prepareNew(sql);
      cache.set(sql, statement);
    }
    return statement;
  };
  const database = new Proxy(sqlite, {
    get(target, property) {
      if (property === "prepare") return prepare;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { database, prepare };
}
