/**
 * A store of its own for a migration test, on SQLite (a temporary data dir) or on PostgreSQL (a
 * database of its own): `open()` makes one; everything it made is closed and removed after the suite.
 */
import { rm } from "node:fs/promises";
import { afterAll } from "vitest";
import { openStore } from "../../src/server/store/database.js";
import { createTestDatabase } from "./postgres.js";
import { makeDataDir } from "./server.js";

export function useStoreToMigrate(dialect: "sqlite" | "postgres") {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  return async function open() {
    const root = await makeDataDir();
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    let databaseUrl: string | undefined;
    if (dialect === "postgres") {
      const database = await createTestDatabase();
      cleanups.push(database.drop);
      databaseUrl = database.url;
    }
    const store = await openStore({ dataDir: root, ...(databaseUrl && { databaseUrl }) });
    cleanups.push(() => store.close());
    return store;
  };
}
