import type { DatabaseConnection, Dialect, Driver, Kysely, LogEvent, TransactionSettings } from "kysely";
import type { StoreObserver } from "../metrics/metrics.js";
import { operationOf } from "../metrics/metrics.js";
import type { Schema } from "./schema.js";

// A database's observer, for the group commit, which runs outside Kysely's executor: keyed by
// the database, so two apps in one process (tests, the embedded CLI beside a server) never
// report into each other's metrics
const observers = new WeakMap<Kysely<Schema>, StoreObserver>();

export function observe(db: Kysely<Schema>, observer: StoreObserver): void {
  observers.set(db, observer);
}

export function observerOf(db: Kysely<Schema>): StoreObserver | undefined {
  return observers.get(db);
}

/** Kysely's log option: the time of every statement its executor runs. */
export function queryLog(observer: StoreObserver): (event: LogEvent) => void {
  return (event) => observer.query(operationOf(event.query.sql), event.queryDurationMillis / 1000);
}

/** `dialect` with each transaction timed from its begin to its commit or rollback. */
export function observedDialect(dialect: Dialect, observer: StoreObserver): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver: () => observedDriver(dialect.createDriver(), observer),
  };
}

function observedDriver(driver: Driver, observer: StoreObserver): Driver {
  const began = new WeakMap<DatabaseConnection, number>();
  const end = (connection: DatabaseConnection, outcome: "commit" | "rollback") => {
    const start = began.get(connection);
    if (start !== undefined) observer.transaction(outcome, (performance.now() - start) / 1000);
    began.delete(connection);
  };
  return {
    init: () => driver.init(),
    acquireConnection: () => driver.acquireConnection(),
    releaseConnection: (connection) => driver.releaseConnection(connection),
    destroy: () => driver.destroy(),
    beginTransaction: async (connection: DatabaseConnection, settings: TransactionSettings) => {
      await driver.beginTransaction(connection, settings);
      began.set(connection, performance.now());
    },
    commitTransaction: async (connection) => {
      try {
        await driver.commitTransaction(connection);
      } finally {
        end(connection, "commit");
      }
    },
    rollbackTransaction: async (connection) => {
      try {
        await driver.rollbackTransaction(connection);
      } finally {
        end(connection, "rollback");
      }
    },
    ...(driver.savepoint && { savepoint: driver.savepoint.bind(driver) }),
    ...(driver.rollbackToSavepoint && { rollbackToSavepoint: driver.rollbackToSavepoint.bind(driver) }),
    ...(driver.releaseSavepoint && { releaseSavepoint: driver.releaseSavepoint.bind(driver) }),
  };
}
