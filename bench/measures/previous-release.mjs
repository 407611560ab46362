// 19. This build against the previous release (BENCH_PREVIOUS_AB, default 4011471, the build issue
// #46 compares against), built from git and measured in the same run, every pair asked A B then B A:
//   - CLI start-up: `--version`, and `events list --json` remote (a warm server of the same build)
//     and embedded (a data dir of the same build), each build on its own data dir with the same 20
//     events, imported by its own CLI;
//   - the server's hot path with autocannon, each server pinned to one core (taskset, where there is
//     one) and the load generator kept off it: the authenticated event read, a first page of 20
//     events and /health;
//   - a login's p50 (section 16's comparison);
//   - the argon2id floor (informational): argon2id verifications alone on one core (bench/argon2-floor.mts,
//     the server's parameters) beside each build's login throughput with its server on one core, and
//     Keycloak's published figure as a reference.
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { join } from "node:path";
import { cannon } from "../lib/cannon.mjs";
import {
  BIN,
  CONNECTIONS,
  EVENT_COUNT,
  knob,
  NODE,
  PASSWORD,
  ROOT,
  ROUNDS,
  RUNS,
  SECONDS,
  WARMUP_SECONDS,
  WARMUPS,
} from "../lib/config.mjs";
import { cpuSeconds } from "../lib/cpu.mjs";
import { buildPrevious, compareLogins, LOGIN, startBuild } from "../lib/previous-build.mjs";
import { describeArgs, run, stop } from "../lib/processes.mjs";
import { info, median, ms, progress, quantile, ratio, table, verdict } from "../lib/report.mjs";
import { parseEvents } from "../lib/setup.mjs";

/** The bars of issue #46: start-up at most 5% slower, throughput at most 5% lower, a login's p50 within 10%. */
const STARTUP_AT_MOST = 1.05;
const THROUGHPUT_AT_LEAST = 0.95;
const LOGIN_WITHIN = 0.1;
/** Keycloak's published sizing: about 15 password logins per second per vCPU. */
const KEYCLOAK_LOGINS_PER_VCPU = 15;
/** Connections of the login throughput: a few, enough to keep one core busy with argon2id. */
const LOGIN_CONNECTIONS = 4;
const ARGON2_FLOOR = join(ROOT, "bench", "argon2-floor.mts");

function hasTaskset() {
  try {
    execFileSync("taskset", ["-V"], { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

/** Every thread of `pid` (and those it starts later) onto `cores` ("1", "0-1"). */
function pin(pid, cores) {
  execFileSync("taskset", ["-a", "-c", "-p", cores, String(pid)], { stdio: "pipe" });
}

/** A build's server with a CLI profile logged in to it, an embedded profile on its data dir, and the same 20 events. */
async function serveBuild(bin, dir, name, base) {
  const server = await startBuild(bin, dir, name, { base });
  const remoteEnv = server.env;
  const embeddedEnv = { ...remoteEnv, BIZCTL_CONFIG_DIR: join(dir, `${name}-config-embedded`) };
  await run([bin, "profile", "add", "r", "--server", server.url, "--use"], { env: remoteEnv });
  for (const env of [remoteEnv, embeddedEnv])
    await run([bin, "auth", "login", "--user", "admin", "--password-stdin"], { env, input: `${PASSWORD}\n` });
  const file = join(dir, `${name}-events.ndjson`);
  const events = Array.from({ length: EVENT_COUNT }, (_, i) => ({
    code: `E${i + 1}`,
    name: "x",
    startsAt: "2027-01-10T09:00:00Z",
  }));
  await writeFile(file, events.map((e) => `${JSON.stringify(e)}\n`).join(""));
  await run([bin, "events", "import", file], { env: remoteEnv });
  const token = (await run([bin, "auth", "token"], { env: remoteEnv })).stdout.trim();
  return { ...server, bin, remoteEnv, embeddedEnv, headers: { authorization: `Bearer ${token}` } };
}

async function startupPairs(builds) {
  const [now] = builds;
  const kinds = [
    {
      label: "bizctl --version",
      args: (b) => [b.bin, "--version"],
      env: (b) => b.remoteEnv,
      check: (out) => /^\d+\.\d+\.\d+/.test(out.trim()) || `printed ${JSON.stringify(out.trim())}`,
    },
    {
      label: "bizctl events list --json (remote, warm server)",
      args: (b) => [b.bin, "events", "list", "--json"],
      env: (b) => b.remoteEnv,
      check: (out) => parseEvents(out, "remote list") && true,
    },
    {
      label: "bizctl events list --json (embedded)",
      args: (b) => [b.bin, "events", "list", "--json"],
      env: (b) => b.embeddedEnv,
      check: (out) => parseEvents(out, "embedded list") && true,
    },
  ];
  const times = kinds.map(() => builds.map(() => []));
  progress(
    `previous release A/B, start-up: ${WARMUPS} warm-up + ${RUNS} rounds of ${kinds.length} commands x 2 builds`,
  );
  for (let round = 0; round < WARMUPS + RUNS; round++) {
    // the commands rotate every round; the two builds of each go A B, then B A the next round
    for (let i = 0; i < kinds.length; i++) {
      const k = (round + i) % kinds.length;
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const which of order) {
        const b = builds[which];
        const args = kinds[k].args(b);
        const result = await run(args, { env: kinds[k].env(b) });
        const ok = kinds[k].check(result.stdout);
        if (ok !== true) throw new Error(`\`${describeArgs(args)}\`: ${ok}`);
        if (round >= WARMUPS) times[k][which].push(result.ms);
      }
    }
  }
  console.log(
    `\n  CLI start-up: median wall time of ${RUNS} runs each after ${WARMUPS} warm-ups, builds and commands interleaved`,
  );
  const rows = [];
  const verdicts = [];
  for (const [k, kind] of kinds.entries()) {
    const [a, b] = times[k].map(median);
    const spread = (t) => `IQR ${quantile(t, 0.25).toFixed(1)}–${quantile(t, 0.75).toFixed(1)} ms`;
    rows.push([`${kind.label}, this build`, ms(a), spread(times[k][0])]);
    rows.push([`${kind.label}, previous`, ms(b), spread(times[k][1])]);
    const name = `${kind.label.replace(/^bizctl /, "")}, this build / previous release`;
    verdicts.push(`  ${name}: ${ratio(a / b)}  ${verdict(name, a / b, "<=", STARTUP_AT_MOST)}`);
  }
  console.log(table(["command", "median", "spread"], rows, [1]));
  for (const line of verdicts) console.log(line);
  // where a difference comes from: what each build's commands load
  for (const b of builds) {
    const dist = join(b.bin, "..", "..", "dist");
    const sizes = (await readdir(dist))
      .filter((f) => /^(cli|server)\.[0-9a-f]+\.js$/.test(f))
      .map((f) => `${f.split(".")[0]} bundle ${(statSync(join(dist, f)).size / 1024).toFixed(0)} KiB`);
    console.log(`  ${b === now ? "this build" : "previous release"}: ${sizes.join(", ")}`);
  }
}

async function hotPath(builds, core) {
  const kinds = [
    { label: "GET /api/crm/v1/events/E1 (Bearer)", path: "/api/crm/v1/events/E1", auth: true },
    { label: "GET /api/crm/v1/events?pagesize=20 (Bearer)", path: "/api/crm/v1/events?pagesize=20", auth: true },
    { label: "GET /health", path: "/health", auth: false },
  ];
  const targets = kinds.map((k) =>
    builds.map((b) => ({
      url: `${b.url}${k.path}`,
      headers: k.auth ? b.headers : {},
      pid: b.child.pid,
      rounds: [],
      cpu: 0,
    })),
  );
  for (const t of targets.flat()) {
    const response = await fetch(t.url, { headers: t.headers });
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${t.url} answered ${response.status}: ${body.slice(0, 300)}`);
    t.bytes = Buffer.byteLength(body);
  }
  progress(
    `previous release A/B, hot path: ${ROUNDS} rounds x ${kinds.length} requests x 2 builds x (${WARMUP_SECONDS} s warm-up + ${SECONDS} s), ${CONNECTIONS} connections`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const pair of targets) {
      for (const t of round % 2 === 0 ? pair : [...pair].reverse()) {
        await cannon(t.url, t.headers, WARMUP_SECONDS);
        const before = cpuSeconds(t.pid);
        t.rounds.push(await cannon(t.url, t.headers, SECONDS));
        t.cpu += cpuSeconds(t.pid) - before;
      }
    }
  }
  const rps = (t) => t.rounds.reduce((n, r) => n + r.requests.total, 0) / t.rounds.reduce((s, r) => s + r.duration, 0);
  const requests = (t) => t.rounds.reduce((n, r) => n + r.requests.total, 0);
  console.log(
    `\n  Server hot path: autocannon, ${CONNECTIONS} connections, ${SECONDS} s after ${WARMUP_SECONDS} s warm-up, ${ROUNDS} rounds, builds alternated; ${core === undefined ? "servers not pinned (no taskset)" : `each server on core ${core}, the load generator off it`}`,
  );
  const rows = [];
  for (const [k, kind] of kinds.entries()) {
    for (const [which, t] of targets[k].entries()) {
      rows.push([
        `${kind.label}, ${which === 0 ? "this build" : "previous"}`,
        `${t.bytes} B`,
        `${Math.round(rps(t))} req/s`,
        Number.isNaN(t.cpu) ? "?" : `${Math.round((t.cpu * 1e6) / requests(t))} µs`,
        t.rounds.map((r) => Math.round(r.requests.total / r.duration)).join(" / "),
      ]);
    }
  }
  console.log(table(["request", "body", "throughput", "server CPU/request", "per round"], rows, [1, 2, 3]));
  for (const [k, kind] of kinds.entries()) {
    const value = rps(targets[k][0]) / rps(targets[k][1]);
    const name = `${kind.label.replace(/ \(Bearer\)$/, "")} req/s, this build / previous release`;
    console.log(`  ${name}: ${ratio(value)}  ${verdict(name, value, ">=", THROUGHPUT_AT_LEAST)}`);
  }
}

/** argon2id verifications per second on one core (`core`, when pinned), from bench/argon2-floor.mts. */
function argon2Floor(core) {
  const args = ["--import", "tsx", ARGON2_FLOOR, String(SECONDS)];
  const out =
    core === undefined
      ? execFileSync(NODE, args, { cwd: ROOT, encoding: "utf8" })
      : execFileSync("taskset", ["-c", String(core), NODE, ...args], { cwd: ROOT, encoding: "utf8" });
  const { verifications, seconds } = JSON.parse(out);
  return verifications / seconds;
}

async function loginFloor(builds, core) {
  const rounds = Math.max(ROUNDS, 2);
  progress(
    `previous release A/B, argon2id floor: ${rounds} rounds of argon2id alone and each build's logins (${LOGIN_CONNECTIONS} connections), ${SECONDS} s each`,
  );
  const floor = [];
  const logins = builds.map(() => []);
  for (let round = 0; round < rounds; round++) {
    floor.push(argon2Floor(core));
    for (const which of round % 2 === 0 ? [0, 1] : [1, 0]) {
      const result = await cannon(`${builds[which].url}/auth/login`, LOGIN.headers, SECONDS, {
        method: "POST",
        body: LOGIN.body,
        connections: LOGIN_CONNECTIONS,
      });
      logins[which].push(result.requests.total / result.duration);
    }
  }
  const argon2 = median(floor);
  const [now, then] = logins.map(median);
  const where = core === undefined ? "the whole machine (no taskset)" : "one core";
  console.log(
    `\n  The argon2id floor: logins per second on ${where}, median of ${rounds} rounds of ${SECONDS} s (informational)`,
  );
  console.log(
    table(
      ["", "per second", "per round"],
      [
        [
          "argon2id verification alone (m=19 MiB, t=2, p=1)",
          `${argon2.toFixed(1)}`,
          floor.map((v) => v.toFixed(1)).join(" / "),
        ],
        [
          `logins, this build (${LOGIN_CONNECTIONS} connections)`,
          `${now.toFixed(1)}`,
          logins[0].map((v) => v.toFixed(1)).join(" / "),
        ],
        [
          `logins, previous release (${LOGIN_CONNECTIONS} connections)`,
          `${then.toFixed(1)}`,
          logins[1].map((v) => v.toFixed(1)).join(" / "),
        ],
        ["Keycloak, published sizing (per vCPU)", `${KEYCLOAK_LOGINS_PER_VCPU}`, ""],
      ],
      [1],
    ),
  );
  console.log(
    `  logins/s, this build / argon2id alone: ${ratio(now / argon2)}  ${info("logins/s per core, this build / argon2id alone", now / argon2)}`,
  );
  console.log(
    `  logins/s, this build / previous release: ${ratio(now / then)}  ${info("logins/s per core, this build / previous release", now / then)}`,
  );
  console.log(
    `  logins/s, this build / Keycloak's 15 per vCPU: ${ratio(now / KEYCLOAK_LOGINS_PER_VCPU)}  ${info("logins/s per core, this build / Keycloak's published 15", now / KEYCLOAK_LOGINS_PER_VCPU)}`,
  );
}

export async function measurePreviousRelease({ base }, dir) {
  const ref = process.env.BENCH_PREVIOUS_AB ?? "4011471";
  const previousRef = execFileSync("git", ["rev-parse", "--short", ref], { cwd: ROOT, encoding: "utf8" }).trim();
  progress(`previous release A/B: building ${previousRef}`);
  const previousBin = await buildPrevious(ref, join(dir, "previous-ab"));
  const builds = [];
  try {
    builds.push(await serveBuild(BIN, dir, "ab-now", base));
    builds.push(await serveBuild(previousBin, dir, "ab-then", base));
    console.log(`\n19. Against the previous release: this build against ${previousRef}, built from git, in one run`);
    await startupPairs(builds);

    // the servers on the last core, this process (autocannon) on the others
    const core = hasTaskset() && cpus().length > 1 ? cpus().length - 1 : undefined;
    const all = `0-${cpus().length - 1}`;
    if (core !== undefined) {
      for (const b of builds) pin(b.child.pid, String(core));
      pin(process.pid, core === 1 ? "0" : `0-${core - 1}`);
    }
    try {
      await hotPath(builds, core);
      const rounds = knob("BENCH_LOGIN_REQUESTS", 60);
      progress(`previous release A/B, login p50: ${rounds} pairs`);
      console.log(`\n  Login p50: ${rounds} pairs over a keep-alive connection each, A B then B A`);
      await compareLogins(`SQLite, vs ${previousRef}`, builds[0], builds[1], rounds, LOGIN_WITHIN);
      await loginFloor(builds, core);
    } finally {
      if (core !== undefined) pin(process.pid, all);
    }
  } finally {
    await Promise.all(builds.map((b) => stop(b.child)));
  }
}
