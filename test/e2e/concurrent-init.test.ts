/**
 * Two `server init` processes started at the same moment on one empty database, through the real
 * binary: exactly one makes the first admin (exit 0), the other gets the clean `conflict` (exit 6)
 * a second init alone gets, and the database holds exactly one user. On SQLite (one data dir) and
 * on PostgreSQL (one fresh database, which both also migrate at once), with the same admin name
 * and with different ones, several rounds each.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { bizctl, type CliResult, errorOf, json, makeSandbox, PASSWORD, show } from "../helpers/cli.js";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";

const ROUNDS = 4;

interface Target {
  env: Record<string, string>;
  args: string[];
  users(): Promise<number>;
  remove(): Promise<void>;
}

async function sqliteTarget(): Promise<Target> {
  const sandbox = await makeSandbox();
  return {
    env: sandbox.env,
    args: [],
    users: async () => {
      const db = new Database(join(sandbox.dataDir, "bizctl.db"), { readonly: true, fileMustExist: true });
      try {
        return (db.prepare("select count(*) as n from resources where resource_type = 'User'").get() as { n: number })
          .n;
      } finally {
        db.close();
      }
    },
    remove: () => sandbox.remove(),
  };
}

async function postgresTarget(): Promise<Target> {
  const sandbox = await makeSandbox();
  const database = await createTestDatabase();
  return {
    env: { ...sandbox.env, BIZCTL_SECRET_KEY: TEST_SECRET_KEY },
    args: ["--database", database.url],
    users: async () => {
      const client = new pg.Client(database.url);
      await client.connect();
      try {
        const { rows } = await client.query("select count(*)::int as n from resources where resource_type = 'User'");
        return rows[0].n as number;
      } finally {
        await client.end();
      }
    },
    remove: async () => {
      await database.drop();
      await sandbox.remove();
    },
  };
}

const STORES = [
  { store: "SQLite", target: sqliteTarget },
  { store: "PostgreSQL", target: postgresTarget },
];
const NAMES = [
  { names: "the same admin name", adminUsers: ["admin", "admin"] },
  { names: "different admin names", adminUsers: ["admin", "root"] },
];

describe.each(STORES)("two server init at once on one fresh $store database", ({ target }) => {
  const targets: Target[] = [];
  afterAll(async () => {
    for (const t of targets.splice(0)) await t.remove();
  });

  it.each(NAMES)(
    "$names: one exits 0, the other 6 (conflict), and the database holds one user",
    async ({ adminUsers }) => {
      for (let round = 0; round < ROUNDS; round++) {
        const fresh = await target();
        targets.push(fresh);
        const init = (adminUser: string) =>
          bizctl(["server", "init", "--admin-user", adminUser, "--password-stdin", ...fresh.args], {
            env: fresh.env,
            input: `${PASSWORD}\n`,
          });
        const results: CliResult[] = await Promise.all(adminUsers.map(init));
        const transcript = `round ${round}:\n${results.map(show).join("\n")}`;
        expect(results.map((r) => r.exitCode).sort(), transcript).toEqual([0, 6]);
        const made = results.find((r) => r.exitCode === 0)!;
        const refused = results.find((r) => r.exitCode === 6)!;
        expect(adminUsers, transcript).toContain(json<{ userName: string }>(made).userName);
        expect(errorOf(refused), transcript).toMatchObject({
          code: "conflict",
          exitCode: 6,
          message: expect.stringMatching(/already exist/),
        });
        expect(await fresh.users(), transcript).toBe(1);
      }
    },
    180_000,
  );
});
