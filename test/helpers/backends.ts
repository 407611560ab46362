/**
 * The two stores an end-to-end test installs the server on: SQLite in the sandbox's data dir, or
 * a fresh PostgreSQL database (with the deployment secret it requires), dropped afterwards.
 */
import type { Env, Sandbox } from "./cli.js";
import { createTestDatabase, TEST_SECRET_KEY } from "./postgres.js";

export interface Installation {
  /** the storage flags of `server init`, `start` and the other `server` commands */
  args: string[];
  env: Env;
  /** the PostgreSQL database's URL; undefined on SQLite */
  databaseUrl?: string;
  drop(): Promise<void>;
}

export interface Backend {
  name: "SQLite" | "PostgreSQL";
  open(sandbox: Sandbox): Promise<Installation>;
}

export const BACKENDS: readonly Backend[] = [
  { name: "SQLite", open: async (sandbox) => ({ args: [], env: sandbox.env, drop: async () => {} }) },
  {
    name: "PostgreSQL",
    open: async (sandbox) => {
      const database = await createTestDatabase();
      return {
        args: ["--database", database.url],
        env: { ...sandbox.env, BIZCTL_SECRET_KEY: TEST_SECRET_KEY },
        databaseUrl: database.url,
        drop: database.drop,
      };
    },
  },
];
