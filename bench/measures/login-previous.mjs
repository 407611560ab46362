// 16. A login against the previous release's: POST /auth/login with the right password on this
// build and on the build of BENCH_PREVIOUS (default a1d4ff5, the release before failed proofs were
// counted before they are checked), each server of its own on SQLite and then on PostgreSQL, the
// two servers asked in turn A B then B A over a keep-alive connection each. What counting a proof
// atomically costs a login (a compare-and-set of the credentials row before argon2id, and its
// release after) shows as the ratio of the medians; argon2id's own time is in both.
import { execFileSync } from "node:child_process";
import { mkdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "undici";
import { knob, LISTENING, NODE, PASSWORD, ROOT } from "../lib/config.mjs";
import { createDatabase, POSTGRES_SECRET_KEY } from "../lib/postgres.mjs";
import { run, startBackground, stop } from "../lib/processes.mjs";
import { median, ms2, progress, quantile, ratio, table, verdict } from "../lib/report.mjs";

/** The bar: a login costs no measurable time more than the previous release's (medians within 10%). */
const WITHIN = 0.1;

/** The previous release, built from git into `dir` with this checkout's packages; its bin. */
function buildPrevious(ref, dir) {
  execFileSync("sh", ["-c", `git archive ${ref} | tar -x -C "${dir}"`], { cwd: ROOT, stdio: "pipe" });
  return dir;
}

/** `server init` and `server start` of one build (`bin`) on its own data dir or database. */
async function startBuild(bin, dir, name, databaseUrl) {
  const dataDir = join(dir, name);
  await mkdir(dataDir, { recursive: true });
  const env = { ...process.env, BIZCTL_CONFIG_DIR: join(dir, `${name}-config`), BIZCTL_DATA_DIR: dataDir };
  if (databaseUrl) env.BIZCTL_SECRET_KEY = POSTGRES_SECRET_KEY;
  const storage = databaseUrl ? ["--database", databaseUrl] : [];
  await run([bin, "server", "init", "--data-dir", dataDir, "--password-stdin", ...storage], {
    env,
    input: `${PASSWORD}\n`,
  });
  return startBackground(
    `bizctl server (${name})`,
    [bin, "server", "start", "--port", "0", "--data-dir", dataDir, "--login-rate-limit", "100000", ...storage],
    { env, pattern: LISTENING, logFile: join(dir, `${name}.log`) },
  );
}

const login = {
  method: "POST",
  path: "/auth/login",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ userName: "admin", password: PASSWORD }),
};

async function timedLogin(client) {
  const started = process.hrtime.bigint();
  const response = await client.request(login);
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`login answered ${response.statusCode}: ${text.slice(0, 300)}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

async function compare(label, current, previous, rounds) {
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
  console.log(`  ${name}: ${ratio(own)}  ${verdict(name, own, "within", WITHIN)}`);
}

export async function measureLoginPrevious(_setup, dir) {
  const ref = process.env.BENCH_PREVIOUS ?? "a1d4ff5";
  const rounds = knob("BENCH_LOGIN_REQUESTS", 60);
  const previousDir = join(dir, "previous-release");
  await mkdir(previousDir, { recursive: true });
  progress(`login against the previous release: building ${ref}`);
  buildPrevious(ref, previousDir);
  await symlink(join(ROOT, "node_modules"), join(previousDir, "node_modules"));
  execFileSync(NODE, ["scripts/build.mjs"], { cwd: previousDir, stdio: "pipe" });
  const previousBin = join(previousDir, "bin", "bizctl.js");
  const currentBin = join(ROOT, "bin", "bizctl.js");
  for (const store of ["sqlite", "postgres"]) {
    const urls = store === "postgres" ? [await createDatabase("login_now"), await createDatabase("login_then")] : [];
    const current = await startBuild(currentBin, dir, `login-now-${store}`, urls[0]);
    const previous = await startBuild(previousBin, dir, `login-then-${store}`, urls[1]);
    try {
      progress(`login against the previous release (${store}): ${rounds} pairs`);
      await compare(store === "sqlite" ? "SQLite" : "PostgreSQL", current, previous, rounds);
    } finally {
      await stop(current.child);
      await stop(previous.child);
    }
  }
}
