// A previous release built from git beside this checkout, its servers, and a login timed against
// this build's: what sections 16 and 19 share.
import { execFileSync } from "node:child_process";
import { mkdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "undici";
import { LISTENING, NODE, PASSWORD, ROOT } from "./config.mjs";
import { POSTGRES_SECRET_KEY } from "./postgres.mjs";
import { run, startBackground } from "./processes.mjs";
import { median, ms2, quantile, ratio, table, verdict } from "./report.mjs";

/**
 * The release at git `ref`, extracted into `dir` (`git archive`), given this checkout's packages
 * and built with its own scripts/build.mjs; its bin.
 */
export async function buildPrevious(ref, dir) {
  await mkdir(dir, { recursive: true });
  execFileSync("sh", ["-c", `git archive ${ref} | tar -x -C "${dir}"`], { cwd: ROOT, stdio: "pipe" });
  await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"));
  execFileSync(NODE, ["scripts/build.mjs"], { cwd: dir, stdio: "pipe" });
  return join(dir, "bin", "bizctl.js");
}

/**
 * `server init` and `server start` of one build (`bin`) on its own data dir (`dir`/`name`) or
 * database, logins not rate-limited; the running server (`url`, `child`), the environment of its
 * CLI (`env`, built on `base`) and its `dataDir`.
 */
export async function startBuild(bin, dir, name, { databaseUrl, base = process.env } = {}) {
  const dataDir = join(dir, name);
  await mkdir(dataDir, { recursive: true });
  const env = { ...base, BIZCTL_CONFIG_DIR: join(dir, `${name}-config`), BIZCTL_DATA_DIR: dataDir };
  if (databaseUrl) env.BIZCTL_SECRET_KEY = POSTGRES_SECRET_KEY;
  const storage = databaseUrl ? ["--database", databaseUrl] : [];
  await run([bin, "server", "init", "--data-dir", dataDir, "--password-stdin", ...storage], {
    env,
    input: `${PASSWORD}\n`,
  });
  const server = await startBackground(
    `bizctl server (${name})`,
    [bin, "server", "start", "--port", "0", "--data-dir", dataDir, "--login-rate-limit", "100000", ...storage],
    { env, pattern: LISTENING, logFile: join(dir, `${name}.log`) },
  );
  return { ...server, env, dataDir };
}

/** The admin's login with the right password, as a request. */
export const LOGIN = {
  method: "POST",
  path: "/auth/login",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ userName: "admin", password: PASSWORD }),
};

async function timedLogin(client) {
  const started = process.hrtime.bigint();
  const response = await client.request(LOGIN);
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`login answered ${response.statusCode}: ${text.slice(0, 300)}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/**
 * `rounds` logins on each server after 5 unmeasured pairs, A B then B A over a keep-alive
 * connection each; prints both medians and p90s and the verdict of the ratio of the medians
 * (within `within`); returns that ratio.
 */
export async function compareLogins(label, current, previous, rounds, within) {
  const clients = [new Client(current.url, { pipelining: 1 }), new Client(previous.url, { pipelining: 1 })];
  const times = [[], []];
  try {
    for (let i = 0; i < 5 + rounds; i++) {
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      for (const which of order) {
        const elapsed = await timedLogin(clients[which]);
        if (i >= 5) times[which].push(elapsed);
      }
    }
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
  console.log(
    table(
      ["login", "median", "p90"],
      [
        [`this build (${label})`, ms2(median(times[0])), ms2(quantile(times[0], 0.9))],
        [`previous release (${label})`, ms2(median(times[1])), ms2(quantile(times[1], 0.9))],
      ],
      [1, 2],
    ),
  );
  const own = median(times[0]) / median(times[1]);
  const name = `login p50, this build / previous release (${label})`;
  console.log(`  ${name}: ${ratio(own)}  ${verdict(name, own, "within", within)}`);
  return own;
}
