// 11. `events import` of BENCH_IMPORT_EVENTS (1 000 000) NDJSON events, against a bare
// better-sqlite3 loop that reads the same file and inserts the same rows, with one prepared
// statement in one transaction, into a data dir made the same way (`server init`: the same
// schema, indexes and triggers). Each import runs on a data dir of its own: embedded (the CLI
// opens the database in-process) and remote (`server start`, over HTTP). Its rate must reach 0.25x
// (embedded) and 0.10x (remote) of the bare loop's. Its peak RSS at the large size must stay within
// 1.3x of its peak at BENCH_IMPORT_EVENTS_SMALL (1 000) lines, in either mode.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { BIN, knob, NODE, PASSWORD, ROOT } from "../lib/config.mjs";
import { freshServer } from "../lib/fresh-server.mjs";
import { run, stop, track } from "../lib/processes.mjs";
import { progress, ratio, table, thousands, verdict } from "../lib/report.mjs";

const MAX_RSS = join(ROOT, "bench", "lib", "max-rss.mjs");
const TYPES = ["webinar", "meeting", "conference", "workshop"];

/** An NDJSON file of `count` events, as an export would write them (without the read-only fields). */
async function writeEvents(file, count, prefix) {
  const out = createWriteStream(file);
  const start = Date.parse("2027-01-01T00:00:00Z");
  for (let i = 0; i < count; i++) {
    const event = {
      code: `${prefix}-${String(i).padStart(7, "0")}`,
      name: `Imported event ${i}`,
      type: TYPES[i % TYPES.length],
      startsAt: new Date(start + i * 60_000).toISOString().replace(".000", ""),
      location: `Room ${i % 50}`,
      tags: ["bulk", `t${i % 10}`],
    };
    if (!out.write(`${JSON.stringify(event)}\n`)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

/** An initialised data dir and a CLI profile (embedded, the default) logged in to it. */
async function embeddedDataDir(base, dir, name) {
  const dataDir = join(dir, name);
  const env = { ...base, BIZCTL_CONFIG_DIR: join(dir, `${name}-config`), BIZCTL_DATA_DIR: dataDir };
  await mkdir(dataDir, { recursive: true });
  await run([BIN, "server", "init", "--data-dir", dataDir, "--password-stdin"], { env, input: `${PASSWORD}\n` });
  await run([BIN, "auth", "login", "--user", "admin", "--password-stdin"], { env, input: `${PASSWORD}\n` });
  return { env, dataDir };
}

/**
 * The bare loop: the file's rows through one prepared INSERT in one transaction (or, with
 * `commitEvery`, one transaction per that many rows, as the import commits); seconds.
 */
async function bareLoop(dataDir, file, commitEvery = Number.POSITIVE_INFINITY) {
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(join(dataDir, "bizctl.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  const insert = db.prepare(
    `insert into events (code_key, code, name, description, type, starts_at, ends_at, all_day, location, organizer,
       attendees, tags, custom_fields, created_at, updated_at, created_by, version)
     values (?, ?, ?, null, ?, ?, null, null, ?, null, null, ?, null, ?, ?, 'admin', 1)`,
  );
  const started = performance.now();
  const now = new Date().toISOString();
  db.exec("begin");
  let rows = 0;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY })) {
    if (++rows % commitEvery === 0) db.exec("commit; begin");
    const e = JSON.parse(line);
    insert.run(
      e.code.toLowerCase(),
      e.code,
      e.name,
      e.type,
      new Date(e.startsAt).toISOString(),
      e.location,
      JSON.stringify(e.tags),
      now,
      now,
    );
  }
  db.exec("commit");
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return seconds;
}

/** `events import FILE` through the binary: seconds and peak RSS (MB); its summary must match. */
async function importThrough(env, file, count) {
  const started = performance.now();
  const child = track(
    spawn(NODE, ["--import", MAX_RSS, BIN, "events", "import", file, "-o", "json"], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk) => {
    stderr += chunk;
  });
  const [code] = await once(child, "close");
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`events import exited with ${code}: ${stderr.slice(-1000)}`);
  const report = JSON.parse(stdout);
  if (report.created !== count) throw new Error(`events import created ${report.created}, not ${count}`);
  const rss = Number(/BENCH_MAX_RSS_KB=(\d+)/.exec(stderr)?.[1]);
  return { seconds, rssMb: rss / 1024 };
}

export async function measureEventsImport({ base }, dir) {
  const large = knob("BENCH_IMPORT_EVENTS", 1_000_000);
  const small = Math.min(knob("BENCH_IMPORT_EVENTS_SMALL", 1_000), large);
  const files = { small: join(dir, "import-small.ndjson"), large: join(dir, "import-large.ndjson") };
  progress(`writing ${thousands(large)} and ${thousands(small)} NDJSON events`);
  // the small file's codes differ, so that both go into one server's store
  await writeEvents(files.small, small, "IMS");
  await writeEvents(files.large, large, "IMP");

  progress(`bare better-sqlite3 loop: ${thousands(large)} rows in one transaction`);
  const bare = await bareLoop((await embeddedDataDir(base, dir, "import-bare")).dataDir, files.large);
  const bareBatched = await bareLoop((await embeddedDataDir(base, dir, "import-bare-1000")).dataDir, files.large, 1000);

  progress(`events import, embedded: ${thousands(small)} then ${thousands(large)} events`);
  const embeddedSmall = await importThrough((await embeddedDataDir(base, dir, "import-e1")).env, files.small, small);
  const embedded = await importThrough((await embeddedDataDir(base, dir, "import-e2")).env, files.large, large);

  progress(`events import, remote: ${thousands(large)} events`);
  const fixture = await freshServer(base, dir, "import-remote");
  let remote;
  let remoteSmall;
  try {
    remoteSmall = await importThrough(fixture.env, files.small, small);
    remote = await importThrough(fixture.env, files.large, large);
  } finally {
    await stop(fixture.server.child);
  }

  const rate = (seconds) => large / seconds;
  const shown = (seconds) => `${thousands(Math.round(rate(seconds)))} events/s (${seconds.toFixed(1)} s)`;
  const embeddedRatio = rate(embedded.seconds) / rate(bare);
  const remoteRatio = rate(remote.seconds) / rate(bare);
  const rssRatio = embedded.rssMb / embeddedSmall.rssMb;
  const remoteRssRatio = remote.rssMb / remoteSmall.rssMb;
  console.log(
    `\n11. events import of ${thousands(large)} NDJSON events (batches of 1 000), against a bare better-sqlite3 loop reading the same file\n` +
      "    and inserting the same rows into the same schema in one transaction",
  );
  console.log(
    table(
      ["run", "rate", "ratio to the bare loop", "target"],
      [
        ["bare better-sqlite3 loop", shown(bare), "", ""],
        [
          "the same loop, a commit every 1 000 rows (informational)",
          shown(bareBatched),
          ratio(rate(bareBatched) / rate(bare)),
          "",
        ],
        [
          "events import, embedded",
          shown(embedded.seconds),
          ratio(embeddedRatio),
          verdict("events import embedded / bare better-sqlite3", embeddedRatio, ">=", 0.25),
        ],
        [
          "events import, remote (HTTP)",
          shown(remote.seconds),
          ratio(remoteRatio),
          verdict("events import remote / bare better-sqlite3", remoteRatio, ">=", 0.1),
        ],
      ],
      [1, 2],
    ),
  );
  console.log(
    table(
      ["events import: peak RSS of the CLI", `at ${thousands(small)}`, `at ${thousands(large)}`, "ratio", "target"],
      [
        [
          "embedded (the server's work in the same process)",
          `${embeddedSmall.rssMb.toFixed(0)} MB`,
          `${embedded.rssMb.toFixed(0)} MB`,
          ratio(rssRatio),
          verdict(
            `events import peak RSS, embedded: ${thousands(large)} / ${thousands(small)} lines`,
            rssRatio,
            "<=",
            1.3,
          ),
        ],
        [
          "remote",
          `${remoteSmall.rssMb.toFixed(0)} MB`,
          `${remote.rssMb.toFixed(0)} MB`,
          ratio(remoteRssRatio),
          verdict(
            `events import peak RSS, remote: ${thousands(large)} / ${thousands(small)} lines`,
            remoteRssRatio,
            "<=",
            1.3,
          ),
        ],
      ],
      [1, 2, 3],
    ),
  );
}
