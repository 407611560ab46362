/**
 * No password is hashed inside a shared write transaction (issue 41): a /Bulk create that sets a
 * password, however it spells `password`, commits the creates before it and hashes with no
 * transaction open, so other writers do not wait for argon2id. A probe in the hashing looks from
 * a connection of its own for a transaction the server holds open: on SQLite, a write lock
 * (`BEGIN IMMEDIATE` refused at once); on PostgreSQL, a session idle in a transaction. Over real
 * HTTP, on SQLite and PostgreSQL.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { bearerCaller, bulkRequest } from "../helpers/http-call.js";
import { STORES } from "../helpers/postgres.js";
import { NEW_PASSWORD, type ServerFixture, useTestServer } from "../helpers/server.js";

const probe = vi.hoisted(() => ({
  /** set while a request runs: what to ask at each hashing, and what it answered */
  ask: undefined as (() => Promise<boolean>) | undefined,
  heldOpen: [] as boolean[],
}));

vi.mock("../../src/server/services/passwords.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/server/services/passwords.js")>();
  return {
    ...original,
    hashPassword: async (password: string) => {
      if (probe.ask) probe.heldOpen.push(await probe.ask());
      return original.hashPassword(password);
    },
  };
});

/** Whether the server holds a write transaction open, seen from another connection. */
function transactionProbe(server: ServerFixture): () => Promise<boolean> {
  if (server.databaseUrl) {
    return async () => {
      const client = new pg.Client({ connectionString: server.databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%' and pid <> pg_backend_pid()",
        );
        return (rows[0] as { n: number }).n > 0;
      } finally {
        await client.end();
      }
    };
  }
  return async () => {
    const db = new Database(join(server.dataDir, "bizctl.db"), { timeout: 0 });
    try {
      db.exec("begin immediate");
      db.exec("rollback");
      return false;
    } catch (error) {
      if ((error as { code?: string }).code === "SQLITE_BUSY") return true;
      throw error;
    } finally {
      db.close();
    }
  };
}

describe.each(STORES)("password hashing in /Bulk on %s", (_store, start) => {
  const server = useTestServer({ listen: true }, start);

  it.each(["password", "Password", "PASSWORD"])(
    "a create with %s after a run of creates hashes with no transaction open",
    async (member) => {
      const prefix = `hash-${crypto.randomUUID().slice(0, 8)}`;
      const run = Array.from({ length: 10 }, (_, i) => ({
        method: "POST",
        path: "/Users",
        bulkId: `u${i}`,
        data: { userName: `${prefix}-${i}` },
      }));
      // it refers to the run, so it runs after the run was written, in the commit the run shares
      const withPassword = {
        method: "POST",
        path: "/Users",
        bulkId: "p",
        data: { userName: `${prefix}-p`, manager: { value: "bulkId:u0" }, [member]: NEW_PASSWORD },
      };
      probe.heldOpen = [];
      probe.ask = transactionProbe(server);
      try {
        const answer = await bearerCaller(server.url, server.token)("POST", "/Bulk", bulkRequest(...run, withPassword));
        expect(answer.statusCode, answer.body).toBe(200);
        const statuses = (answer.json().Operations as { status: string }[]).map((operation) => operation.status);
        expect(statuses).toEqual(Array.from({ length: 11 }, () => "201"));
      } finally {
        probe.ask = undefined;
      }
      expect(probe.heldOpen).toEqual([false]);
    },
  );
});
