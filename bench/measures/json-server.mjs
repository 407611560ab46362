// 9. Against json-server 0.17, the fake REST server people reach for first: GET by id among 10 000
// records and POST create, beside bizctl's authenticated, validated equivalents (an event GET by
// code and an event POST, Bearer, on a server of their own), with autocannon, measured alternately.
// json-server is installed by this measure into a temporary folder (`npm install --prefix`), never
// as a dependency of bizctl.
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { cannon } from "../lib/cannon.mjs";
import { knob, NODE, ROOT, ROUNDS, SECONDS, WARMUP_SECONDS } from "../lib/config.mjs";
import { freshServer } from "../lib/fresh-server.mjs";
import { stop, track } from "../lib/processes.mjs";
import { progress, ratio, table, thousands, verdict } from "../lib/report.mjs";

const EVENTS = "/api/crm/v1/events";

function npmInstall(prefix) {
  return new Promise((resolve, reject) => {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const child = spawn(npm, ["install", "--prefix", prefix, "--no-audit", "--no-fund", "json-server@0.17"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`npm install json-server@0.17 failed: ${stderr}`)),
    );
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startJsonServer(prefix, dbFile) {
  const port = await freePort();
  const bin = join(prefix, "node_modules", "json-server", "lib", "cli", "bin.js");
  const child = track(
    spawn(NODE, [bin, "--port", String(port), "--host", "127.0.0.1", "--quiet", dbFile], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`json-server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/records/1`)).ok) return { child, url };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("json-server did not answer within 30 s");
}

export async function measureJsonServer({ base }, dir) {
  const records = knob("BENCH_JSON_RECORDS", 10_000);
  progress("json-server: npm install json-server@0.17 into a temporary folder");
  const prefix = join(dir, "json-server");
  await npmInstall(prefix);
  const dbFile = join(dir, "db.json");
  const record = (i) => ({ id: i, name: `Record ${i}`, type: "webinar", startsAt: "2027-01-10T09:00:00Z" });
  await writeFile(dbFile, JSON.stringify({ records: Array.from({ length: records }, (_, i) => record(i + 1)) }));
  const json = await startJsonServer(prefix, dbFile);
  const bizctl = await freshServer(base, dir, "versus-json-server");
  try {
    // the record and the event read: the middle one of 10 000, and one event (bizctl's store size does not matter to a by-key read)
    const created = await fetch(`${bizctl.server.url}${EVENTS}`, {
      method: "POST",
      headers: { ...bizctl.headers, "content-type": "application/json" },
      body: JSON.stringify({ code: "READ-1", name: "Read me", startsAt: "2027-01-10T09:00:00Z" }),
    });
    if (created.status !== 201) throw new Error(`creating the read event answered ${created.status}`);
    const body = JSON.stringify({ name: "Created", type: "webinar", startsAt: "2027-01-10T09:00:00Z" });
    const post = { method: "POST", body };
    const targets = {
      get: [
        { url: `${json.url}/records/${Math.floor(records / 2)}`, headers: {} },
        { url: `${bizctl.server.url}${EVENTS}/READ-1`, headers: bizctl.headers },
      ],
      post: [
        { url: `${json.url}/records`, headers: { "content-type": "application/json" }, extra: post },
        {
          url: `${bizctl.server.url}${EVENTS}`,
          headers: { ...bizctl.headers, "content-type": "application/json" },
          extra: post,
        },
      ],
    };
    const rates = { get: [[], []], post: [[], []] };
    progress(`json-server against bizctl: GET and POST, ${ROUNDS} round(s) of ${SECONDS} s each, alternately`);
    for (const [key, pair] of Object.entries(targets)) {
      for (const target of pair) await cannon(target.url, target.headers, WARMUP_SECONDS, target.extra);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [i, target] of pair.entries()) {
          const result = await cannon(target.url, target.headers, SECONDS, target.extra);
          rates[key][i].push(result.requests.average);
        }
      }
    }
    const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
    const rows = [
      ["GET by id / event GET by code", "get", 2],
      ["POST create / event POST", "post", 50],
    ].map(([label, key, target]) => {
      const [theirs, ours] = rates[key].map(mean);
      return [
        label,
        `${thousands(Math.round(theirs))} req/s`,
        `${thousands(Math.round(ours))} req/s`,
        ratio(ours / theirs),
        verdict(`bizctl / json-server 0.17: ${key.toUpperCase()}`, ours / theirs, ">=", target),
      ];
    });
    console.log(
      `\n9. Against json-server 0.17 (${thousands(records)} records in db.json), autocannon ${SECONDS} s x ${ROUNDS} round(s), alternately;\n` +
        "   bizctl with Bearer authentication, schema validation and its SQLite store, on a server of its own",
    );
    console.log(table(["operation", "json-server", "bizctl", "ratio", "target"], rows, [1, 2, 3]));
  } finally {
    await stop(json.child);
    await stop(bizctl.server.child);
  }
}
