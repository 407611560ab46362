/**
 * The two stores an end-to-end test installs the server on: SQLite in the sandbox's data dir, or
 * a fresh PostgreSQL database (with the deployment secret it requires), dropped afterwards.
 */
import { type Env, initDataDir, makeSandbox, type RunningServer, type Sandbox, startServer } from "./cli.js";
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

export interface Installed {
  sandbox: Sandbox;
  installation: Installation;
  server: RunningServer;
  /** stops the server, drops the database and removes the sandbox */
  close(): Promise<void>;
}

/**
 * A fresh sandbox installed on `backend`: `server init` (admin, PASSWORD), `beforeStart`, then a
 * started `server start` with `serverArgs` beside the storage flags.
 */
export async function installAndStart(
  backend: Backend,
  options: {
    serverArgs?: string[];
    beforeStart?: (sandbox: Sandbox, installation: Installation) => Promise<void>;
  } = {},
): Promise<Installed> {
  const sandbox = await makeSandbox();
  const installation = await backend.open(sandbox);
  let server: RunningServer | undefined;
  const close = async () => {
    await server?.stop();
    await installation.drop();
    await sandbox.remove();
  };
  try {
    await initDataDir(installation.env, installation.args);
    await options.beforeStart?.(sandbox, installation);
    server = await startServer(sandbox.dataDir, {
      env: installation.env,
      args: [...installation.args, ...(options.serverArgs ?? [])],
    });
  } catch (error) {
    await close();
    throw error;
  }
  return { sandbox, installation, server, close };
}
