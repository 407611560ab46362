/**
 * A test server on the machine's PostgreSQL (CI: 127.0.0.1:5432, trust auth;
 * BIZCTL_TEST_POSTGRES_URL points elsewhere), on a database of its own that close() drops.
 * The server is shared with other runs: never touch a database this helper did not create.
 */
import pg from "pg";
import { type StartServer, startTestServer, type TestServer, type TestServerOptions } from "./server.js";

export const POSTGRES_URL = process.env.BIZCTL_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

async function maintenance(statement: string): Promise<void> {
  const client = new pg.Client(POSTGRES_URL);
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database; returns its URL and a function that drops it. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `bizctl_test_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await maintenance(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => maintenance(`drop database if exists ${name} with (force)`) };
}

/** A deployment secret for tests (base64 of 32 bytes), as every instance of one deployment shares. */
export const TEST_SECRET_KEY = Buffer.alloc(32, 42).toString("base64");

export async function startPostgresTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const database = await createTestDatabase();
  try {
    const server = await startTestServer({ secretKey: TEST_SECRET_KEY, ...options, databaseUrl: database.url });
    return {
      ...server,
      databaseUrl: database.url,
      close: async () => {
        await server.close();
        await database.drop();
      },
    };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** Both stores, for a suite that must hold on each: `describe.each(STORES)("… on %s", (store, start) => …)`. */
export const STORES: [store: "SQLite" | "PostgreSQL", start: StartServer][] = [
  ["SQLite", startTestServer],
  ["PostgreSQL", startPostgresTestServer],
];
