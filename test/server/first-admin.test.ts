/**
 * createFirstAdmin (`server init`) called at the same moment by two apps on one empty database,
 * as two processes would: exactly one admin is made, the other call gets the clean `conflict`
 * that a second init alone gets (never a constraint's name, never a second admin). On SQLite
 * (two connections to one file) and on PostgreSQL, with the same and with different names.
 */
import { rm } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { type BuiltApp, buildApp } from "../../src/server/app.js";
import { ProblemError } from "../../src/server/problem-error.js";
import { createFirstAdmin } from "../../src/server/services/first-admin.js";
import { countUsers } from "../../src/server/store/users-repo.js";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";
import { ADMIN_PASSWORD, makeDataDir } from "../helpers/server.js";

const ROUNDS = 5;

interface Pair {
  apps: BuiltApp[];
  close(): Promise<void>;
}

/** Two apps on one fresh database, each with its own connection(s). */
async function twoApps(store: "SQLite" | "PostgreSQL"): Promise<Pair> {
  const dataDir = await makeDataDir();
  const database = store === "PostgreSQL" ? await createTestDatabase() : undefined;
  const options = {
    log: false as const,
    dataDir,
    ...(database && { databaseUrl: database.url, secretKey: TEST_SECRET_KEY }),
  };
  const first = await buildApp(options);
  const second = await buildApp(options);
  return {
    apps: [first, second],
    close: async () => {
      await Promise.all([first.close(), second.close()]);
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

const SCENARIOS = [
  { store: "SQLite", names: "the same name", userNames: ["admin", "admin"] },
  { store: "SQLite", names: "different names", userNames: ["admin", "root"] },
  { store: "PostgreSQL", names: "the same name", userNames: ["admin", "admin"] },
  { store: "PostgreSQL", names: "different names", userNames: ["admin", "root"] },
] as const;

describe("two first admins at once", () => {
  const pairs: Pair[] = [];
  afterAll(async () => {
    for (const pair of pairs.splice(0)) await pair.close();
  });

  it.each(SCENARIOS)(
    "$store, $names: one admin is made, the other call is a conflict",
    async ({ store, userNames }) => {
      for (let round = 0; round < ROUNDS; round++) {
        const pair = await twoApps(store);
        pairs.push(pair);
        const outcomes = await Promise.allSettled(
          pair.apps.map((app, i) =>
            createFirstAdmin(app.services, { userName: userNames[i]!, password: ADMIN_PASSWORD, temporary: false }),
          ),
        );
        const made = outcomes.filter((o) => o.status === "fulfilled");
        const refused = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason] : []));
        expect(made, `round ${round}: ${refused.map(String).join("; ")}`).toHaveLength(1);
        expect(refused).toHaveLength(1);
        expect(refused[0]).toBeInstanceOf(ProblemError);
        expect(refused[0]).toMatchObject({ code: "conflict", message: expect.stringMatching(/already exist/) });
        expect(await countUsers(pair.apps[0]!.services.store.db)).toBe(1);
      }
    },
    120_000,
  );
});
