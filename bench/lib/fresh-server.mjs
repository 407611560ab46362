// A data dir of its own (`server init`, on SQLite or on an empty PostgreSQL database), its `server
// start`, and, for freshServer, a CLI profile logged in to it: for the measures that must not touch
// the shared fixture's data.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { BIN, LISTENING, PASSWORD } from "./config.mjs";
import { POSTGRES_SECRET_KEY } from "./postgres.mjs";
import { run, startBackground } from "./processes.mjs";

/**
 * A data dir of its own (on `databaseUrl`, an empty PostgreSQL database, when given), `server
 * init`, `seed(dataDir, env)` when given, and its `server start` with `args`; the running server
 * (`url`, `child`), the environment its CLI runs with (`env`) and what `seed` returned (`seeded`).
 */
export async function initAndStart(base, dir, name, { databaseUrl, args = [], seed } = {}) {
  const dataDir = join(dir, name);
  const storage = databaseUrl ? ["--database", databaseUrl] : [];
  const env = { ...base, BIZCTL_CONFIG_DIR: join(dir, `${name}-config`), BIZCTL_DATA_DIR: dataDir };
  // required on PostgreSQL: every instance of a deployment shares it
  if (databaseUrl) env.BIZCTL_SECRET_KEY = POSTGRES_SECRET_KEY;
  await mkdir(dataDir, { recursive: true });
  await run([BIN, "server", "init", "--data-dir", dataDir, "--password-stdin", ...storage], {
    env,
    input: `${PASSWORD}\n`,
  });
  const seeded = seed ? await seed(dataDir, env) : undefined;
  const server = await startBackground(
    `bizctl server (${name})`,
    [BIN, "server", "start", "--port", "0", "--data-dir", dataDir, ...storage, ...args],
    { env, pattern: LISTENING, logFile: join(dir, `${name}.log`) },
  );
  return { ...server, env, seeded };
}

/**
 * initAndStart() with the same options, then a CLI profile ("b", the default one) logged in as the
 * admin: `env`, `server` (`url`, `child`), Bearer `headers` and `seeded`.
 */
export async function freshServer(base, dir, name, options = {}) {
  const { env, seeded, ...server } = await initAndStart(base, dir, name, options);
  await run([BIN, "profile", "add", "b", "--server", server.url, "--use"], { env });
  await run([BIN, "auth", "login", "--user", "admin", "--password-stdin"], { env, input: `${PASSWORD}\n` });
  const token = (await run([BIN, "auth", "token"], { env })).stdout.trim();
  return { env, server, headers: { authorization: `Bearer ${token}` }, seeded };
}
