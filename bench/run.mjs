#!/usr/bin/env node
// `npm run bench` (= `npm run build && node bench/run.mjs`): start-up and throughput of bizctl,
// each reported as a ratio to a reference measured in the same run, next to its target.
//
//   1. CLI start-up: median wall time of `node -e 0`, `bizctl --version`, `bizctl events list --json`
//      against a warm remote server and the same command in embedded mode, interleaved.
//   2. Server throughput: authenticated GET /api/crm/v1/events/{code} on the bizctl server against
//      a bare Fastify route (bench/bare-server.mjs), measured alternately with autocannon.
//   3. Start-up breakdown: the import cost of the main dependencies on top of `node -e 0`, and of
//      dist/main.js and each chunk it loads lazily (labelled with what its source map says it holds).
//   4. Resource filters at scale: server-side time (app.inject, in-process from src/ through tsx, see
//      bench/filters.mts) of `userName eq` and `emails.value co` filters at 1 000 and 100 000 users.
//   5. renewPassword enumeration timing: median latency of POST /renewPassword for an existing and an
//      unknown user, interleaved, over HTTP against a server started with a high --login-rate-limit.
//   6. OAuth-signed vs Bearer throughput on GET /api/crm/v1/events/{code}: token credentials from one
//      three-legged flow, every autocannon request signed afresh (nonce, timestamp) in setupRequest.
// Sections 2 to 6 also print informational rows (no targets) to show where the time goes.
//
// It is a script, not a test: it prints PASS/MISS per target and exits 0 whatever the numbers;
// it exits 1 only when something could not be measured. Everything runs in a fresh temporary
// directory (BIZCTL_CONFIG_DIR / BIZCTL_DATA_DIR), and the background servers are always stopped.
//
// Knobs, for quick checks (the defaults are the reference settings):
//   BENCH_RUNS (15) start-up runs per command, BENCH_IMPORT_RUNS (7) runs per import,
//   BENCH_SECONDS (5) per throughput measurement, BENCH_ROUNDS (2) throughput rounds per server
//   (sections 2 and 6), BENCH_FILTER_USERS (100000) users at the large size, BENCH_FILTER_SMALL (1000) at the
//   small one, BENCH_FILTER_EQ (200) / BENCH_FILTER_CO (30) requests per filter and size,
//   BENCH_RENEW_REQUESTS (200) renewPassword requests per kind.
import { execFileSync, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { closeSync, existsSync, openSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import OAuth from "oauth-1.0a";
import { Client } from "undici";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, "bin", "bizctl.js");
const BARE_SERVER = join(ROOT, "bench", "bare-server.mjs");
const FILTERS_SCRIPT = join(ROOT, "bench", "filters.mts");
const NODE = process.execPath;
const PKG = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

const PASSWORD = "correct horse battery staple 42";
const EVENT_COUNT = 20; // one default page of `events list`

function knob(name, fallback) {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}
const RUNS = knob("BENCH_RUNS", 15);
const WARMUPS = 2;
const IMPORT_RUNS = knob("BENCH_IMPORT_RUNS", 7);
const IMPORT_WARMUPS = 1;
const SECONDS = knob("BENCH_SECONDS", 5);
const WARMUP_SECONDS = 1;
const ROUNDS = knob("BENCH_ROUNDS", 2);
const CONNECTIONS = 10;

// ---------------------------------------------------------------- processes

/** Every child we started and that has not exited yet: stopped on the way out, whatever happens. */
const children = new Set();

function track(child) {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

async function stopAll() {
  await Promise.all([...children].map(stop));
}

process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

/**
 * Runs `node ARGS` to completion; `ms` is the wall time from spawn to exit (stdio closed).
 * `forwardStderr`: its stderr (progress lines) also goes to ours as it comes.
 */
function exec(args, { env, input, cwd = ROOT, forwardStderr = false } = {}) {
  return new Promise((resolve, reject) => {
    const out = [];
    const err = [];
    const started = process.hrtime.bigint();
    const child = track(
      spawn(NODE, args, { cwd, env, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] }),
    );
    child.stdout.on("data", (chunk) => out.push(chunk));
    child.stderr.on("data", (chunk) => {
      err.push(chunk);
      if (forwardStderr) process.stderr.write(chunk);
    });
    child.once("error", reject);
    child.once("close", (code, signal) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      resolve({ code, signal, ms, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
    });
    if (input !== undefined) child.stdin.end(input);
  });
}

function describeArgs(args) {
  return `node ${args.map((a) => (a === BIN ? "bin/bizctl.js" : /[\s"'()]/.test(a) ? JSON.stringify(a) : a)).join(" ")}`;
}

/** exec() that must succeed. */
async function run(args, options) {
  const result = await exec(args, options);
  if (result.code !== 0) {
    throw new Error(
      `\`${describeArgs(args)}\` exited with ${result.code ?? result.signal}\n--- stderr:\n${result.stderr.trim()}\n--- stdout:\n${result.stdout.trim().slice(0, 2000)}`,
    );
  }
  return result;
}

/**
 * Starts `node ARGS` in the background and resolves once a line of its stderr matches `pattern`
 * (whose first group is the URL); its stdout goes to `logFile` (or nowhere).
 */
async function startBackground(label, args, { env, pattern, logFile }) {
  const fd = logFile ? openSync(logFile, "a") : "ignore";
  const child = track(spawn(NODE, args, { cwd: ROOT, env, stdio: ["ignore", fd, "pipe"] }));
  if (typeof fd === "number") closeSync(fd);
  let stderr = "";
  child.stderr.setEncoding("utf8");
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (message) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`${label}: ${message}\n--- stderr:\n${stderr.trim()}`));
    };
    const timer = setTimeout(() => fail("did not announce its URL within 30 s"), 30_000);
    child.stderr.on("data", (chunk) => {
      if (stderr.length < 64 * 1024) stderr += chunk; // keep draining the pipe either way
      const match = pattern.exec(stderr);
      if (match && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve({ child, url: match[1] });
      }
    });
    child.once("error", (error) => fail(error.message));
    child.once("exit", (code, signal) => fail(`exited early with ${code ?? signal}`));
  });
}

// ---------------------------------------------------------------- numbers and tables

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}
const median = (values) => quantile(values, 0.5);
const ms = (value) => `${value.toFixed(1)} ms`;
const ratio = (value) => `${value.toFixed(2)}x`;

function table(headers, rows, rightAligned = []) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) =>
    `  ${cells
      .map((c, i) => (rightAligned.includes(i) ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i])))
      .join("  ")
      .trimEnd()}`;
  return [line(headers), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** Every compared ratio, for the closing summary. */
const verdicts = [];
/** op "<=" or ">=" compares the ratio with the target; "within" passes when |1 - ratio| < target. */
function verdict(name, value, op, target) {
  const pass = op === "<=" ? value <= target : op === ">=" ? value >= target : Math.abs(1 - value) < target;
  const targetText = op === "within" ? `|1 - x| < ${target.toFixed(2)}` : `${op} ${ratio(target)}`;
  verdicts.push({ name, value, targetText, pass });
  return `target ${targetText}  ${pass ? "PASS" : "MISS"}`;
}

const progress = (message) => process.stderr.write(`… ${message}\n`);

// ---------------------------------------------------------------- the bench

function gitState() {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "bin", "scripts"], {
      cwd: ROOT,
      encoding: "utf8",
    }).trim();
    return `${commit}${dirty ? " + uncommitted changes in src/bin/scripts" : ""}`;
  } catch {
    return "unknown";
  }
}

function parseEvents(stdout, what) {
  let list;
  try {
    list = JSON.parse(stdout);
  } catch {
    throw new Error(`${what}: stdout is not JSON: ${stdout.slice(0, 300)}`);
  }
  if (!Array.isArray(list) || list.length !== EVENT_COUNT)
    throw new Error(`${what}: expected an array of ${EVENT_COUNT} events, got ${stdout.slice(0, 300)}`);
  return list;
}

async function setUp(dir) {
  const dataDir = join(dir, "data");
  // Nothing of the caller's bizctl setup leaks in; XDG dirs point into the temp dir too.
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("BIZCTL_")));
  Object.assign(base, { XDG_CONFIG_HOME: join(dir, "xdg-config"), XDG_DATA_HOME: join(dir, "xdg-data") });
  const remoteEnv = { ...base, BIZCTL_CONFIG_DIR: join(dir, "config-remote"), BIZCTL_DATA_DIR: dataDir };
  const embeddedEnv = { ...base, BIZCTL_CONFIG_DIR: join(dir, "config-embedded"), BIZCTL_DATA_DIR: dataDir };

  progress("setting up: server init, server start, profile, login, events");
  await run([BIN, "server", "init", "--data-dir", dataDir, "--password-stdin"], {
    env: remoteEnv,
    input: `${PASSWORD}\n`,
  });
  const server = await startBackground(
    "bizctl server",
    [BIN, "server", "start", "--port", "0", "--data-dir", dataDir],
    {
      env: remoteEnv,
      pattern: /bizctl server listening on (http:\/\/127\.0\.0\.1:\d+)/,
      logFile: join(dir, "server.log"),
    },
  );
  await run([BIN, "profile", "add", "r", "--server", server.url, "--use"], { env: remoteEnv });
  await run([BIN, "auth", "login", "--user", "admin", "--password-stdin"], {
    env: remoteEnv,
    input: `${PASSWORD}\n`,
  });
  const codes = Array.from({ length: EVENT_COUNT }, (_, i) => `E${i + 1}`);
  for (let i = 0; i < codes.length; i += 4) {
    await Promise.all(
      codes.slice(i, i + 4).map((code) =>
        run(
          [
            BIN,
            "events",
            "create",
            "--set",
            `code=${code}`,
            "--set",
            "name=x",
            "--set",
            "startsAt=2027-01-10T09:00:00Z",
          ],
          {
            env: remoteEnv,
          },
        ),
      ),
    );
  }
  // the embedded side: its own config dir, whose `default` profile is embedded on the same data dir
  const embeddedLogin = await run([BIN, "auth", "login", "--user", "admin", "--password-stdin"], {
    env: embeddedEnv,
    input: `${PASSWORD}\n`,
  });
  const loggedInTo = JSON.parse(embeddedLogin.stdout).server;
  if (!String(loggedInTo).startsWith("embedded")) throw new Error(`the embedded login went to ${loggedInTo}`);

  const token = (await run([BIN, "auth", "token"], { env: remoteEnv })).stdout.trim();
  // both modes see the same data
  const remote = parseEvents((await run([BIN, "events", "list", "--json"], { env: remoteEnv })).stdout, "remote list");
  const embedded = parseEvents(
    (await run([BIN, "events", "list", "--json"], { env: embeddedEnv })).stdout,
    "embedded list",
  );
  if (JSON.stringify(remote) !== JSON.stringify(embedded))
    throw new Error("the remote and embedded `events list` differ: not the same data dir?");
  return { base, remoteEnv, embeddedEnv, server, token, dataDir };
}

async function measureStartup({ base, remoteEnv, embeddedEnv }) {
  const cases = [
    { key: "baseline", label: "node -e 0", args: ["-e", "0"], env: base },
    {
      key: "version",
      label: "bizctl --version",
      args: [BIN, "--version"],
      env: remoteEnv,
      check: (out) => out.includes(PKG.version) || `printed ${JSON.stringify(out.trim())}`,
      target: 1.3,
    },
    {
      key: "remote",
      label: "bizctl events list --json (remote, warm server)",
      args: [BIN, "events", "list", "--json"],
      env: remoteEnv,
      check: (out) => parseEvents(out, "remote list") && true,
      target: 1.5,
    },
    {
      key: "embedded",
      label: "bizctl events list --json (embedded)",
      args: [BIN, "events", "list", "--json"],
      env: embeddedEnv,
      check: (out) => parseEvents(out, "embedded list") && true,
      target: 3,
    },
  ];
  const times = Object.fromEntries(cases.map((c) => [c.key, []]));
  progress(`CLI start-up: ${WARMUPS} warm-up + ${RUNS} measured rounds of ${cases.length} commands, interleaved`);
  for (let round = 0; round < WARMUPS + RUNS; round++) {
    // rotate the order every round so that no command always runs right after the same one
    for (let i = 0; i < cases.length; i++) {
      const c = cases[(round + i) % cases.length];
      const result = await run(c.args, { env: c.env });
      const ok = c.check ? c.check(result.stdout) : true;
      if (ok !== true) throw new Error(`\`${describeArgs(c.args)}\`: ${ok}`);
      if (round >= WARMUPS) times[c.key].push(result.ms);
    }
  }

  const baseline = median(times.baseline);
  console.log(`\n1. CLI start-up: median wall time of ${RUNS} runs after ${WARMUPS} warm-ups, interleaved`);
  const medians = {};
  const rows = cases.map((c) => {
    const m = median(times[c.key]);
    medians[c.key] = m;
    const spread = `IQR ${quantile(times[c.key], 0.25).toFixed(1)}–${quantile(times[c.key], 0.75).toFixed(1)} ms`;
    const compared = c.target ? verdict(c.label, m / baseline, "<=", c.target) : "(reference)";
    return [c.label, `${ms(m)} (ratio ${ratio(m / baseline)} node -e 0)`, compared, spread];
  });
  console.log(table(["command", "median", "target", "spread"], rows));
  return { baseline, medians };
}

const STATIC_IMPORT = /(?:^|\n)import\s*(?:[^;()]*?\sfrom\s*)?"(\.\.?\/[^"]+)"/g;
const DYNAMIC_IMPORT = /import\("(\.\/chunks\/[^"]+\.js)"\)/g;

/** A bundle file and every file it imports statically (the part of dist/ that loading it evaluates). */
function staticClosure(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const [, spec] of readFileSync(file, "utf8").matchAll(STATIC_IMPORT))
    staticClosure(join(dirname(file), spec), seen);
  return seen;
}

/** What a set of bundle files holds, from their source maps: packages by file count, else our sources. */
function contentsOf(files) {
  const packages = new Map();
  const own = [];
  for (const file of files) {
    let sources = [];
    try {
      sources = JSON.parse(readFileSync(`${file}.map`, "utf8")).sources ?? [];
    } catch {}
    for (const source of sources) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)?.[1];
      if (pkg) packages.set(pkg, (packages.get(pkg) ?? 0) + 1);
      else if (/(^|\/)src\//.test(source)) own.push(source.replace(/^.*?src\//, "src/"));
    }
  }
  // our direct dependencies first (they are why the chunk exists), then the rest by file count
  const direct = new Set(Object.keys(PKG.dependencies ?? {}));
  const ranked = [...packages].sort((a, b) => b[1] - a[1]).map(([name]) => name);
  const top = [...ranked.filter((n) => direct.has(n)), ...ranked.filter((n) => !direct.has(n))];
  if (top.length) {
    const shown = Math.max(4, ranked.filter((n) => direct.has(n)).length);
    return `${top.slice(0, shown).join(", ")}${top.length > shown ? ` +${top.length - shown} more` : ""}`;
  }
  return own.slice(0, 3).join(", ") + (own.length > 3 ? ` +${own.length - 3} more` : "") || "?";
}

/** The chunks dist/main.js loads lazily (the command paths), with what each adds to main.js. */
function lazyChunks() {
  const main = join(ROOT, "dist", "main.js");
  const loaded = staticClosure(main);
  const specs = [...new Set([...readFileSync(main, "utf8").matchAll(DYNAMIC_IMPORT)].map((m) => m[1]))];
  return specs.map((spec) => {
    const file = join(ROOT, "dist", spec);
    const added = [...staticClosure(file)].filter((f) => !loaded.has(f));
    const bytes = added.reduce((sum, f) => sum + statSync(f).size, 0);
    return { spec: `./dist/${spec.slice(2)}`, name: spec.slice(2), contents: contentsOf(added), bytes };
  });
}

async function measureImports({ base }, startup) {
  const packages = [
    { label: "(ESM loader: import of a builtin)", spec: "node:os" },
    { label: "commander", spec: "commander" },
    { label: "undici", spec: "undici" },
    { label: "conf", spec: "conf" },
    { label: "chalk", spec: "chalk" },
    { label: "cli-table3", spec: "cli-table3" },
    { label: "fastify", spec: "fastify" },
    { label: "better-sqlite3 (JS only)", spec: "better-sqlite3" },
    {
      label: "better-sqlite3 + open :memory: (native addon)",
      code: 'import("better-sqlite3").then((m) => new m.default(":memory:").close())',
    },
    { label: "jose", spec: "jose" },
    { label: "kysely (embedded too)", spec: "kysely" },
    { label: "pino (embedded too)", spec: "pino" },
    { label: "@fastify/swagger (embedded too)", spec: "@fastify/swagger" },
  ];
  let chunks = [];
  try {
    chunks = lazyChunks();
  } catch (error) {
    progress(`could not read the chunks of dist/main.js, table 3b shows main.js only: ${error.message}`);
  }
  const cases = [
    { label: "node -e 0", code: "0" },
    ...packages.map((m) => ({ label: m.label, code: m.code ?? `import(${JSON.stringify(m.spec)})` })),
    { label: "dist/main.js", code: 'import("./dist/main.js")' },
    ...chunks.map((c) => ({
      label: c.name,
      code: `import("./dist/main.js").then(() => import(${JSON.stringify(c.spec)}))`,
    })),
  ];
  const times = cases.map(() => []);
  progress(`start-up breakdown: ${IMPORT_WARMUPS} warm-up + ${IMPORT_RUNS} rounds of ${cases.length} imports`);
  for (let round = 0; round < IMPORT_WARMUPS + IMPORT_RUNS; round++) {
    for (let i = 0; i < cases.length; i++) {
      const index = (round + i) % cases.length;
      const result = await run(["-e", cases[index].code], { env: base, cwd: ROOT });
      if (round >= IMPORT_WARMUPS) times[index].push(result.ms);
    }
  }
  const medians = times.map(median);
  const [baseline, loader] = medians;
  const plus = (value) => `${value >= 0 ? "+" : ""}${value.toFixed(1)} ms`;

  console.log(
    `\n3. Start-up breakdown: \`node -e 'import("X")'\` from the project dir, median of ${IMPORT_RUNS} runs, interleaved; node -e 0 = ${ms(baseline)}`,
  );
  console.log(
    `  CLI over node -e 0 (section 1): --version ${plus(startup.medians.version - startup.baseline)}, ` +
      `remote list ${plus(startup.medians.remote - startup.baseline)}, embedded list ${plus(startup.medians.embedded - startup.baseline)}`,
  );
  console.log("\n  a) the packages, from node_modules");
  const packageRows = packages.map((p, i) => {
    const m = medians[i + 1];
    return [p.label, ms(m), plus(m - baseline), i === 0 ? "" : plus(m - loader)];
  });
  console.log(table(["import", "median", "over node -e 0", "over the loader"], packageRows, [1, 2, 3]));
  console.log(
    "  dist/ bundles all but better-sqlite3, argon2, pg and pino, so the CLI pays their parse/evaluate cost but\n" +
      "  not their resolution and file reads; shared dependencies overlap, so these do not add up.",
  );

  console.log(
    "\n  b) the CLI bundle as the commands load it: dist/main.js, then each lazily imported chunk on top of it",
  );
  const mainIndex = packages.length + 1;
  const bundleRows = [
    [
      "dist/main.js (every command)",
      "",
      ms(medians[mainIndex]),
      plus(medians[mainIndex] - baseline),
      "(commander, our commands)",
    ],
    ...chunks.map((c, i) => [
      c.name,
      `${Math.round(c.bytes / 1024)} KiB`,
      ms(medians[mainIndex + 1 + i]),
      plus(medians[mainIndex + 1 + i] - medians[mainIndex]),
      c.contents,
    ]),
  ];
  console.log(table(["file", "adds", "median", "cost", "holds (from its source map)"], bundleRows, [1, 2, 3]));
  console.log(
    "  cost: dist/main.js over node -e 0; a chunk over dist/main.js alone (with the shared chunks it pulls in);\n" +
      "  a few ms either way is noise (see the IQRs in section 1).",
  );
}

/** `extra`: further autocannon options (`requests` with a setupRequest, for per-request headers). */
async function cannon(url, headers, seconds, extra = {}) {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: seconds, ...extra });
  if (result.errors || result.timeouts || result.non2xx) {
    const statuses = Object.entries(result.statusCodeStats ?? {})
      .map(([code, { count }]) => `${count} x ${code}`)
      .join(", ");
    throw new Error(
      `autocannon on ${url}: ${result.non2xx} non-2xx responses${statuses ? ` (${statuses})` : ""}, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  return result;
}

async function measureThroughput({ base, remoteEnv, server, token, dataDir }, dir) {
  const bare = await startBackground("bare Fastify server", [BARE_SERVER], {
    env: base,
    pattern: /bare server listening on (http:\/\/127\.0\.0\.1:\d+)/,
  });
  // a second bizctl server on the same data dir, quiet: how much of the cost is the request log
  const quiet = await startBackground(
    "bizctl server (--log-level warn)",
    [BIN, "server", "start", "--port", "0", "--data-dir", dataDir, "--log-level", "warn"],
    {
      env: remoteEnv,
      pattern: /bizctl server listening on (http:\/\/127\.0\.0\.1:\d+)/,
      logFile: join(dir, "quiet.log"),
    },
  );
  const bearer = { authorization: `Bearer ${token}` };
  const targets = [
    { label: "bizctl: GET /api/crm/v1/events/E1 (Bearer)", url: `${server.url}/api/crm/v1/events/E1`, headers: bearer },
    { label: "bare Fastify: GET /x", url: `${bare.url}/x`, headers: {} },
    // informational only: where the bizctl request time goes
    { label: "  same, server --log-level warn", url: `${quiet.url}/api/crm/v1/events/E1`, headers: bearer },
    { label: "  bizctl: GET /auth/isLogged (Bearer, no event)", url: `${server.url}/auth/isLogged`, headers: bearer },
    { label: "  bizctl: GET /health (no auth, no database)", url: `${server.url}/health`, headers: {} },
  ];
  for (const t of targets) {
    const response = await fetch(t.url, { headers: t.headers });
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${t.url} answered ${response.status}: ${body.slice(0, 300)}`);
    t.bytes = Buffer.byteLength(body);
    t.requests = 0;
    t.seconds = 0;
    t.rounds = [];
  }

  progress(
    `server throughput: ${ROUNDS} rounds x ${targets.length} targets x (${WARMUP_SECONDS} s warm-up + ${SECONDS} s), ${CONNECTIONS} connections`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    // alternate the order every round so that drift (heat, neighbours) hits every target alike
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      await cannon(t.url, t.headers, WARMUP_SECONDS);
      const result = await cannon(t.url, t.headers, SECONDS);
      t.requests += result.requests.total;
      t.seconds += result.duration;
      t.rounds.push(result);
    }
  }
  await Promise.all([stop(bare.child), stop(quiet.child)]);

  console.log(
    `\n2. Server throughput: autocannon, ${CONNECTIONS} connections, ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up, ${ROUNDS} rounds per target alternated`,
  );
  const rps = (t) => t.requests / t.seconds;
  const reference = rps(targets[1]);
  const rows = targets.map((t) => [
    t.label,
    `${t.bytes} B`,
    `${Math.round(rps(t))} req/s`,
    ratio(rps(t) / reference),
    `${(1000 / rps(t) - 1000 / reference).toFixed(3)} ms`,
    t.rounds.map((r) => Math.round(r.requests.total / r.duration)).join(" / "),
    `${median(t.rounds.map((r) => r.latency.p50))} / ${median(t.rounds.map((r) => r.latency.p99))} ms`,
  ]);
  console.log(
    table(["target", "body", "throughput", "vs bare", "extra/request", "per round", "p50 / p99"], rows, [1, 2, 3, 4]),
  );
  const value = rps(targets[0]) / reference;
  console.log(
    `  ratio bizctl / bare: ${ratio(value)}  ${verdict("server throughput vs bare Fastify", value, ">=", 0.5)}`,
  );
  console.log(
    "  (extra/request: 1 s / throughput minus the bare one, a rough server CPU cost per request on the core it owns;\n" +
      "  the bizctl server runs as `server start` does by default, info-level request logs, here to a file;\n" +
      "  the indented rows are informational: they split the bizctl cost into logging, auth and the event itself)",
  );
}

// ---------------------------------------------------------------- 4. resource filters at scale

const ms2 = (value) => `${value.toFixed(2)} ms`;
const thousands = (n) => n.toLocaleString("en-US").replace(/,/g, " ");

async function measureFilters({ base }, dir) {
  const dataDir = join(dir, "filters-data");
  const users = knob("BENCH_FILTER_USERS", 100_000);
  progress(
    `resource filters: the app in-process from src/ (tsx), ${thousands(users)} users seeded in two phases (most of the time is the seeding)`,
  );
  // progress lines of the child come through; its stdout is one JSON object
  const result = await run(["--import", "tsx", FILTERS_SCRIPT, dataDir], { env: base, forwardStderr: true });
  await rm(dataDir, { recursive: true, force: true });
  let data;
  try {
    data = JSON.parse(result.stdout.trim().split("\n").pop());
  } catch {
    throw new Error(`bench/filters.mts: stdout is not the expected JSON: ${result.stdout.slice(0, 500)}`);
  }
  const { sizes, seedSeconds } = data;
  const small = sizes.small + 1; // and the admin
  const large = sizes.large + 1;
  console.log(
    `\n4. Resource filters at scale: GET /Resources?filter=… through app.inject() (in-process, whole Fastify pipeline, no socket),\n` +
      `   as admin, sequential requests after a warm-up, at ${thousands(small)} then ${thousands(large)} users`,
  );
  const perUser = (seedSeconds.large * 1000) / (sizes.large - sizes.small);
  console.log(
    `  seeding (insertResource + credential per user, as createResource writes them): ${thousands(sizes.small)} users in ${seedSeconds.small.toFixed(1)} s, ` +
      `${thousands(sizes.large - sizes.small)} more in ${seedSeconds.large.toFixed(1)} s (${perUser.toFixed(2)} ms per user); ` +
      `${thousands(data.resources)} resources, ${thousands(data.resourceValues)} indexed values`,
  );
  const rows = data.filters.map((f) => {
    const value = f.large.medianMs / f.small.medianMs;
    const compared =
      f.key === "eq"
        ? verdict(`filter ${f.filter}: ${thousands(large)} / ${thousands(small)} users`, value, "<=", 1.5)
        : "(informational: a scan)";
    return [
      f.filter,
      String(f.small.requests),
      `${ms2(f.small.medianMs)} / ${ms2(f.small.p90Ms)}`,
      `${ms2(f.large.medianMs)} / ${ms2(f.large.p90Ms)}`,
      `${f.small.totalResults} / ${f.large.totalResults}`,
      ratio(value),
      compared,
    ];
  });
  console.log(
    table(
      [
        "filter",
        "requests",
        `median / p90 at ${thousands(small)}`,
        `median / p90 at ${thousands(large)}`,
        "matches",
        "ratio",
        "target",
      ],
      rows,
      [1, 2, 3, 4, 5],
    ),
  );
  console.log(
    "  (the users are chosen so that both sizes hold the looked-up user and the same co matches: only the data around\n" +
      "  them grows; the eq filter is answered from the (path, text_value) index, the co filter has a leading wildcard)",
  );
}

// ---------------------------------------------------------------- 5. renewPassword enumeration timing

async function measureRenewPassword({ remoteEnv, dataDir }, dir) {
  const requests = knob("BENCH_RENEW_REQUESTS", 200);
  const warmups = 20;
  progress(`renewPassword timing: a user with an e-mail, a server with --login-rate-limit 100000`);
  await run([BIN, "users", "create", "--user-name", "jdoe", "--email", "jdoe@example.com"], { env: remoteEnv });
  const server = await startBackground(
    "bizctl server (--login-rate-limit 100000)",
    [BIN, "server", "start", "--port", "0", "--data-dir", dataDir, "--login-rate-limit", "100000"],
    {
      env: remoteEnv,
      pattern: /bizctl server listening on (http:\/\/127\.0\.0\.1:\d+)/,
      logFile: join(dir, "renew.log"),
    },
  );
  const outbox = join(dataDir, "outbox");
  const mails = () => (existsSync(outbox) ? readdirSync(outbox).filter((f) => f.endsWith(".eml")).length : 0);
  const mailsBefore = mails();
  // one keep-alive connection, as a careful attacker would use: no connection set-up in the times
  const client = new Client(server.url, { pipelining: 1 });
  const cases = [
    { key: "existing", label: 'existing user  {"userName":"jdoe"}', userName: "jdoe", times: [] },
    { key: "missing", label: 'unknown user   {"userName":"nobody-9f3c"}', userName: "nobody-9f3c", times: [] },
  ];
  const bodies = new Set();
  const afterExisting = [];
  const afterMissing = [];
  let previous;
  async function once(c, measured) {
    const payload = JSON.stringify({ userName: c.userName });
    const started = process.hrtime.bigint();
    const response = await client.request({
      method: "POST",
      path: "/renewPassword",
      headers: { "content-type": "application/json" },
      body: payload,
    });
    const text = await response.body.text();
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (response.statusCode !== 202) {
      throw new Error(`POST /renewPassword ${payload} answered ${response.statusCode}: ${text.slice(0, 300)}`);
    }
    bodies.add(text);
    if (measured) {
      c.times.push(elapsed);
      if (previous) (previous === "existing" ? afterExisting : afterMissing).push(elapsed);
    }
    previous = c.key;
  }
  progress(`renewPassword timing: ${warmups} warm-up + ${requests} measured requests each, interleaved A B B A`);
  try {
    for (let i = 0; i < warmups + requests; i++) {
      // A B, B A, A B, …: each kind follows each kind equally often, so that the background work an
      // existing user starts (look-up, token, e-mail file) weighs on both kinds alike
      const pair = i % 2 === 0 ? [cases[0], cases[1]] : [cases[1], cases[0]];
      for (const c of pair) await once(c, i >= warmups);
    }
  } finally {
    await client.close();
  }
  // the mail is written after the answer: wait for it (at most 5 s) to show the work was done
  const expected = warmups + requests;
  for (let waited = 0; mails() - mailsBefore < expected && waited < 5000; waited += 100) await sleep(100);
  const mailsWritten = mails() - mailsBefore;
  await stop(server.child);

  console.log(
    `\n5. renewPassword enumeration timing: POST /renewPassword over HTTP (undici, one keep-alive connection) to\n` +
      `   \`server start --login-rate-limit 100000\`, ${requests} requests each after ${warmups} warm-ups, interleaved A B B A`,
  );
  const [existing, missing] = cases;
  const rows = cases.map((c) => [
    c.label,
    ms2(median(c.times)),
    ms2(quantile(c.times, 0.9)),
    `${ms2(quantile(c.times, 0.25))}–${ms2(quantile(c.times, 0.75))}`,
  ]);
  rows.push([
    "  (informational) any request right after an existing-user one",
    ms2(median(afterExisting)),
    ms2(quantile(afterExisting, 0.9)),
    "",
  ]);
  rows.push([
    "  (informational) any request right after an unknown-user one",
    ms2(median(afterMissing)),
    ms2(quantile(afterMissing, 0.9)),
    "",
  ]);
  console.log(table(["request", "median", "p90", "IQR"], rows, [1, 2]));
  const value = median(existing.times) / median(missing.times);
  console.log(
    `  ratio of the medians existing / unknown: ${ratio(value)}  ${verdict("renewPassword median existing / unknown user", value, "within", 0.2)}`,
  );
  console.log(
    `  p90 ratio ${ratio(quantile(existing.times, 0.9) / quantile(missing.times, 0.9))}; ` +
      `answers: ${bodies.size === 1 ? "byte-identical for both" : `${bodies.size} different bodies (!)`}; ` +
      `reset e-mails written for jdoe: ${mailsWritten} of ${expected} requests`,
  );
}

// ---------------------------------------------------------------- 6. OAuth-signed vs Bearer throughput

/** An HMAC-SHA1 signer from the oauth-1.0a package (independent of the server's implementation). */
function oauthSigner(consumer) {
  return new OAuth({
    consumer: { key: consumer.key, secret: consumer.secret },
    signature_method: "HMAC-SHA1",
    hash_function: (baseString, key) => createHmac("sha1", key).update(baseString).digest("base64"),
  });
}

function signHeader(signer, { method, url, data = {} }, token) {
  const signed = signer.authorize({ method, url, data }, token && { key: token.token, secret: token.secret });
  return signer.toHeader(signed).Authorization;
}

async function httpCall(what, url, init, expected = 200) {
  const response = await fetch(url, init);
  const body = await response.text();
  if (response.status !== expected) throw new Error(`${what}: ${response.status} ${body.slice(0, 300)}`);
  return body;
}

/** The three legs of RFC 5849 against the running server, once: token credentials of the admin. */
async function oauthFlow(serverUrl, token) {
  const bearer = { authorization: `Bearer ${token}` };
  const created = JSON.parse(
    await httpCall(
      "creating the OAuthConsumer",
      `${serverUrl}/Resources`,
      {
        method: "POST",
        headers: { ...bearer, "content-type": "application/json" },
        body: JSON.stringify({ resourceType: "OAuthConsumer", name: "bench", callbackUrls: [] }),
      },
      201,
    ),
  );
  const consumer = { key: created.consumerKey, secret: created.consumerSecret };
  const signer = oauthSigner(consumer);
  const endpoint = `${serverUrl}/oAuth`;
  const first = new URLSearchParams(
    await httpCall("temporary credentials (POST /oAuth, oauth_callback=oob)", endpoint, {
      method: "POST",
      headers: {
        authorization: signHeader(signer, { method: "POST", url: endpoint, data: { oauth_callback: "oob" } }),
      },
    }),
  );
  const temporary = { token: first.get("oauth_token"), secret: first.get("oauth_token_secret") };
  const approval = JSON.parse(
    await httpCall(
      "approval (GET /oAuth?oauth_token=… as the admin)",
      `${endpoint}?oauth_token=${encodeURIComponent(temporary.token)}`,
      {
        headers: bearer,
      },
    ),
  );
  const exchange = new URLSearchParams(
    await httpCall("token credentials (POST /oAuth with the verifier)", endpoint, {
      method: "POST",
      headers: {
        authorization: signHeader(
          signer,
          { method: "POST", url: endpoint, data: { oauth_verifier: approval.oauth_verifier } },
          temporary,
        ),
      },
    }),
  );
  return { signer, access: { token: exchange.get("oauth_token"), secret: exchange.get("oauth_token_secret") } };
}

async function measureOAuth({ server, token }) {
  progress("OAuth: consumer, three-legged flow, one signed request");
  const { signer, access } = await oauthFlow(server.url, token);
  const path = "/api/crm/v1/events/E1";
  const url = `${server.url}${path}`; // autocannon sends Host: 127.0.0.1:PORT, the host signed here
  const sign = () => signHeader(signer, { method: "GET", url }, access);
  const check = await fetch(url, { headers: { authorization: sign() } });
  const checkBody = await check.text();
  if (check.status !== 200) {
    throw new Error(
      `OAuth: a request signed with the token credentials was refused (${check.status}), so the signed throughput cannot be measured: ${checkBody.slice(0, 400)}`,
    );
  }
  const bearerBody = await httpCall("Bearer check", url, { headers: { authorization: `Bearer ${token}` } });
  if (bearerBody !== checkBody) throw new Error("OAuth: the signed and the Bearer answers differ");

  // the client's own cost of a signature (it runs on the same two cores as the server)
  for (let i = 0; i < 200; i++) sign();
  const signStarted = process.hrtime.bigint();
  const SIGNS = 2000;
  for (let i = 0; i < SIGNS; i++) sign();
  const signMicros = Number(process.hrtime.bigint() - signStarted) / 1e3 / SIGNS;

  const targets = [
    {
      label: `GET ${path}, Authorization: OAuth (HMAC-SHA1, fresh nonce each)`,
      headers: {},
      extra: {
        requests: [
          {
            method: "GET",
            path,
            setupRequest(req) {
              req.headers.authorization = sign();
              return req;
            },
          },
        ],
      },
    },
    { label: `GET ${path}, Authorization: Bearer`, headers: { authorization: `Bearer ${token}` }, extra: {} },
  ];
  for (const t of targets) Object.assign(t, { requests: 0, seconds: 0, rounds: [] });
  progress(
    `OAuth vs Bearer: ${ROUNDS} rounds x 2 targets x (${WARMUP_SECONDS} s warm-up + ${SECONDS} s), ${CONNECTIONS} connections`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      await cannon(url, t.headers, WARMUP_SECONDS, t.extra);
      const result = await cannon(url, t.headers, SECONDS, t.extra);
      t.requests += result.requests.total;
      t.seconds += result.duration;
      t.rounds.push(result);
    }
  }

  console.log(
    `\n6. OAuth-signed vs Bearer throughput: autocannon, ${CONNECTIONS} connections, ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up, ` +
      `${ROUNDS} rounds per target alternated,\n   on the bizctl server of section 2 (info-level request log to a file)`,
  );
  const rps = (t) => t.requests / t.seconds;
  const [signed, bearer] = targets;
  const rows = targets.map((t) => [
    t.label,
    `${Math.round(rps(t))} req/s`,
    ratio(rps(t) / rps(bearer)),
    `${(1000 / rps(t) - 1000 / rps(bearer)).toFixed(3)} ms`,
    t.rounds.map((r) => Math.round(r.requests.total / r.duration)).join(" / "),
    `${median(t.rounds.map((r) => r.latency.p50))} / ${median(t.rounds.map((r) => r.latency.p99))} ms`,
  ]);
  console.log(table(["target", "throughput", "vs Bearer", "extra/request", "per round", "p50 / p99"], rows, [1, 2, 3]));
  const value = rps(signed) / rps(bearer);
  console.log(
    `  ratio OAuth / Bearer: ${ratio(value)}  ${verdict("OAuth-signed vs Bearer throughput", value, ">=", 0.8)}`,
  );
  console.log(
    `  (the signatures are made by autocannon's setupRequest in this process: ${signMicros.toFixed(1)} µs each, on the same\n` +
      "  two cores as the server; a signed request reads the consumer and the token, checks the HMAC and inserts its nonce)",
  );
}

function summary() {
  console.log("\nSummary");
  console.log(
    table(
      ["measure", "ratio", "target", "result"],
      verdicts.map((v) => [v.name, ratio(v.value), v.targetText, v.pass ? "PASS" : "MISS"]),
      [1],
    ),
  );
  const missed = verdicts.filter((v) => !v.pass).length;
  console.log(`  ${verdicts.length - missed} of ${verdicts.length} targets met`);
}

let workDir;
let cleaningUp;
function cleanUp() {
  cleaningUp ??= (async () => {
    await stopAll();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  })();
  return cleaningUp;
}

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: stopping the servers\n`);
    cleanUp().finally(() => process.exit(130));
  });
}

const startedAt = Date.now();
try {
  const cpu = cpus();
  console.log(
    `bizctl ${PKG.version} bench · node ${process.version} · ${cpu.length} x ${cpu[0]?.model ?? "cpu"} · ${process.platform}/${process.arch} · load ${loadavg()[0].toFixed(1)} · git ${gitState()}`,
  );
  workDir = await mkdtemp(join(tmpdir(), "bizctl-bench-"));
  const setup = await setUp(workDir);
  const startup = await measureStartup(setup);
  await measureThroughput(setup, workDir);
  await measureImports(setup, startup);
  await measureFilters(setup, workDir);
  await measureRenewPassword(setup, workDir);
  await measureOAuth(setup);
  summary();
  console.log(`\n(total ${((Date.now() - startedAt) / 1000).toFixed(0)} s)`);
} catch (error) {
  console.error(`\nbench failed: ${error?.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
