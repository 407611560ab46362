// 8. A million events: the same reads at BENCH_EVENTS_SMALL (1 000) and BENCH_EVENTS (1 000 000)
// events, each on its own data dir (made by `server init`, then seeded straight into its store by
// bench/seed-events.mts with BENCH_USERS users at the large size, pro rata at the small one) and
// its own `server start`, both up at once; on SQLite, then on PostgreSQL (BENCH_MILLION_STORES=
// sqlite for the first alone). Each read is the median wall time of sequential requests over HTTP
// after a warm-up, alternating between the two servers; the ratio large / small must stay <= 1.5x.
// `events export` runs through the binary against each server and, on SQLite, embedded on each
// data dir: its rate, and its peak RSS, which must stay flat (<= 1.3x). With both stores, the
// remote export's rate at the large size on PostgreSQL must reach half SQLite's (>= 0.5x).
// BENCH_MILLION_PG_IMPORT=1: the large PostgreSQL database gets its events from `events import`
// of the same events through its server (its users are still seeded), as a deployment fills one.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { BIN, knob, NODE, PASSWORD, ROOT } from "../lib/config.mjs";
import { freshServer } from "../lib/fresh-server.mjs";
import { createDatabase } from "../lib/postgres.mjs";
import { run, stop, track } from "../lib/processes.mjs";
import { info, median, ms2, progress, ratio, table, thousands, verdict } from "../lib/report.mjs";

const SEED_SCRIPT = join(ROOT, "bench", "seed-events.mts");
const MAX_RSS = join(ROOT, "bench", "lib", "max-rss.mjs");
const EVENTS_PATH = "/api/crm/v1/events";
const PAGE_SIZE = 100;
/** The orders a list may ask for (EVENT_SORTABLE_FIELDS of src/contract/events.ts), each way. */
const ORDERS = [
  "code",
  "name",
  "type",
  "startsAt",
  "endsAt",
  "allDay",
  "location",
  "organizer",
  "createdAt",
  "updatedAt",
  "createdBy",
].flatMap((field) => [field, `-${field}`]);
const DEEP_PAGE = 5000;

/**
 * A data dir of `events` events and `users` users (on `databaseUrl` when given), its server, a
 * logged-in CLI profile ("b") and a token; on SQLite also a profile of the embedded mode on the
 * same data dir ("embedded"), for the export.
 */
async function prepare(base, dir, events, users, databaseUrl, imported = false) {
  const name = `events-${databaseUrl ? "postgres" : "sqlite"}-${events}`;
  const file = join(dir, `${name}.ndjson`);
  const fixture = await freshServer(base, dir, name, {
    databaseUrl,
    seed: async (dataDir, env) => {
      progress(
        `seeding ${thousands(events)} events${imported ? " (into a file to import)" : ""} and ${thousands(users)} users`,
      );
      const args = ["--import", "tsx", SEED_SCRIPT, dataDir, String(events), String(users)];
      if (databaseUrl) args.push(databaseUrl);
      return JSON.parse((await run(args, { env: imported ? { ...env, SEED_EVENTS_NDJSON: file } : env })).stdout);
    },
  });
  if (imported) {
    progress(`events import of ${thousands(events)} events through the server`);
    const started = performance.now();
    const summary = JSON.parse((await run([BIN, "events", "import", file, "-o", "json"], { env: fixture.env })).stdout);
    if (summary.created !== events) throw new Error(`events import created ${summary.created}, not ${events}`);
    fixture.importSeconds = (performance.now() - started) / 1000;
    await rm(file, { force: true });
  }
  if (!databaseUrl) {
    const dataDir = fixture.env.BIZCTL_DATA_DIR;
    const embedded = ["profile", "add", "embedded", "--server", "embedded", "--data-dir", dataDir];
    await run([BIN, ...embedded], { env: fixture.env });
    await run([BIN, "--profile", "embedded", "auth", "login", "--user", "admin", "--password-stdin"], {
      env: fixture.env,
      input: `${PASSWORD}\n`,
    });
  }
  return { ...fixture, seedSeconds: fixture.seeded.seconds };
}

async function get(url, headers) {
  const response = await fetch(url, { headers });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${body.slice(0, 300)}`);
  return { response, body };
}

/** median and p90 wall time of `requests` sequential GETs after `warmups` */
async function timeGets(url, headers, requests, warmups) {
  const times = [];
  for (let i = 0; i < warmups + requests; i++) {
    const started = performance.now();
    await get(url, headers);
    if (i >= warmups) times.push(performance.now() - started);
  }
  return median(times);
}

const nextLink = (response) => /<([^>]*)>; rel="next"/.exec(response.headers.get("link") ?? "")?.[1];

/** `events export -o ndjson` through the binary, with `profile`: events written, seconds, peak RSS (MB) */
async function exportAll(env, profile) {
  const started = performance.now();
  const child = track(
    spawn(NODE, ["--import", MAX_RSS, BIN, "--profile", profile, "events", "export", "-o", "ndjson"], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
  let lines = 0;
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const [code] = await once(child, "close");
  if (code !== 0) throw new Error(`events export exited with ${code}: ${stderr.slice(-1000)}`);
  const rss = Number(/BENCH_MAX_RSS_KB=(\d+)/.exec(stderr)?.[1]);
  return { lines, seconds: (performance.now() - started) / 1000, rssMb: rss / 1024 };
}

export async function measureMillionEvents({ base }, dir) {
  const large = knob("BENCH_EVENTS", 1_000_000);
  const sizes = {
    large,
    small: Math.min(knob("BENCH_EVENTS_SMALL", 1_000), large),
    users: knob("BENCH_USERS", 100_000),
    requests: knob("BENCH_EVENT_REQUESTS", 200),
  };
  const stores = (process.env.BENCH_MILLION_STORES ?? "sqlite,postgres").split(",");
  const imported = process.env.BENCH_MILLION_PG_IMPORT === "1";
  const largest = {};
  for (const store of stores) {
    const databaseUrls =
      store === "postgres" ? [await createDatabase("events_small"), await createDatabase("events_large")] : [];
    const fixtures = await measureOn(base, dir, sizes, databaseUrls, imported);
    report(store, sizes, fixtures);
    largest[store] = fixtures[1];
  }
  if (largest.sqlite && largest.postgres) reportExportRates(sizes.large, largest);
}

/** The remote export's rate at the large size: PostgreSQL's against SQLite's, in the same run. */
function reportExportRates(events, { sqlite, postgres }) {
  const rate = (fixture) => fixture.exported.lines / fixture.exported.seconds;
  const value = rate(postgres) / rate(sqlite);
  const made = postgres.importSeconds
    ? `, its events by \`events import\` (${postgres.importSeconds.toFixed(1)} s)`
    : "";
  console.log(
    table(
      [
        `events export -o ndjson (remote) of ${thousands(events)} events`,
        "SQLite",
        `PostgreSQL${made}`,
        "ratio",
        "target",
      ],
      [
        [
          "rate",
          `${thousands(Math.round(rate(sqlite)))} events/s`,
          `${thousands(Math.round(rate(postgres)))} events/s`,
          ratio(value),
          verdict(`events export (remote) rate at ${thousands(events)} events: PostgreSQL / SQLite`, value, ">=", 0.5),
        ],
      ],
      [1, 2, 3],
    ),
  );
}

/** Both sizes on one store (PostgreSQL when `databaseUrls` holds the small and the large one's database). */
async function measureOn(base, dir, { small, large, users, requests }, databaseUrls, imported) {
  const deepLarge = Math.min(DEEP_PAGE, Math.ceil(large / PAGE_SIZE));
  const fixtures = [];
  try {
    for (const [s, events] of [small, large].entries()) {
      const userCount = Math.max(1, Math.round((users * events) / large));
      const fixture = await prepare(
        base,
        dir,
        events,
        userCount,
        databaseUrls[s],
        imported && s === 1 && databaseUrls.length > 0,
      );
      fixtures.push(fixture);
      const url = (query) => `${fixture.server.url}${EVENTS_PATH}${query}`;
      // the deep page: page 5 000 of 100 (or the last one there is), reached by the cursor of the page before
      const deep = Math.min(DEEP_PAGE, Math.ceil(events / PAGE_SIZE));
      const cursorOf = async (order) => {
        const before = await get(url(`?pagesize=${PAGE_SIZE}&page=${deep - 1}${order}`), fixture.headers);
        const link = nextLink(before.response);
        if (!link) throw new Error(`page ${deep - 1} of ${events} events has no next link`);
        return `${fixture.server.url}${link}`;
      };
      const cursorPage = await cursorOf("");
      // in the order of a field that may be empty (a type on every event here), whose cursor
      // condition is two ranges of its index
      const typeCursorPage = await cursorOf("&order=type");
      Object.assign(fixture, {
        events,
        deep,
        offsetUrl: url(`?pagesize=${PAGE_SIZE}&page=${deep}`),
        reads: [
          ["GET one event by code", url("/EV-0000500")],
          ["first page, default order", url("")],
          ['first page, filter=type eq "webinar"', url(`?filter=${encodeURIComponent('type eq "webinar"')}`)],
          ...ORDERS.map((order) => [`first page, order=${order}`, url(`?order=${order}`)]),
          [
            'first page, filter=type eq "webinar", order=-startsAt',
            url(`?order=-startsAt&filter=${encodeURIComponent('type eq "webinar"')}`),
          ],
          [
            `deep page of ${PAGE_SIZE} by cursor (page ${thousands(deepLarge)}; the last, ${deep}, at the small size)`,
            cursorPage,
          ],
          [`the same deep page by cursor in order=type`, typeCursorPage],
        ],
        medians: [],
      });
    }
    // both servers stay up and each read alternates between them, so that the machine's load
    // drifting during the run weighs on both sizes alike
    progress(
      `timing ${fixtures[0].reads.length} reads, alternating ${thousands(small)} and ${thousands(large)} events`,
    );
    for (let i = 0; i < fixtures[0].reads.length; i++) {
      const times = fixtures.map(() => []);
      for (let n = 0; n < 20 + requests; n++) {
        for (const [f, fixture] of fixtures.entries()) {
          const started = performance.now();
          await get(fixture.reads[i][1], fixture.headers);
          if (n >= 20) times[f].push(performance.now() - started);
        }
      }
      for (const [f, fixture] of fixtures.entries()) fixture.medians.push(median(times[f]));
    }
    for (const fixture of fixtures) {
      // what the cursor saves: the same deep page by offset (informational, a few requests)
      fixture.offset = await timeGets(fixture.offsetUrl, fixture.headers, 5, 1);
      progress(`events export at ${thousands(fixture.events)} events`);
      fixture.exported = await exportAll(fixture.env, "b");
      if (!databaseUrls.length) fixture.exportedEmbedded = await exportAll(fixture.env, "embedded");
      for (const exported of [fixture.exported, fixture.exportedEmbedded].filter(Boolean)) {
        if (exported.lines !== fixture.events)
          throw new Error(`export wrote ${exported.lines} events, not ${fixture.events}`);
      }
    }
  } finally {
    for (const fixture of fixtures) await stop(fixture.server.child);
  }
  return fixtures;
}

function report(store, { small, large, users, requests }, [a, b]) {
  console.log(
    `\n8. A million events: sequential GETs over HTTP (Bearer) to \`server start\` on ${store === "postgres" ? "PostgreSQL" : "SQLite"}, alternating sizes, median of ${requests} after a warm-up,\n` +
      `   at ${thousands(small)} then ${thousands(large)} events (${thousands(users)} users at the large size); seeding took ${a.seedSeconds.toFixed(1)} s and ${b.seedSeconds.toFixed(1)} s` +
      (b.importSeconds
        ? `,\n   the large one's events written by \`events import\` through its server in ${b.importSeconds.toFixed(1)} s`
        : ""),
  );
  const rows = a.reads.map(([label], i) => {
    const value = b.medians[i] / a.medians[i];
    return [
      label,
      ms2(a.medians[i]),
      ms2(b.medians[i]),
      ratio(value),
      verdict(`${store} ${label}: ${thousands(large)} / ${thousands(small)} events`, value, "<=", 1.5),
    ];
  });
  rows.push([
    `the same deep page by offset (page=${b.deep} / ${a.deep})`,
    ms2(a.offset),
    ms2(b.offset),
    ratio(b.offset / a.offset),
    info(`${store} deep page by offset: ${thousands(large)} / ${thousands(small)} events`, b.offset / a.offset),
  ]);
  console.log(
    table(
      ["read", `median at ${thousands(small)}`, `median at ${thousands(large)}`, "ratio", "target"],
      rows,
      [1, 2, 3],
    ),
  );
  const rate = (e) => `${thousands(Math.round(e.lines / e.seconds))} events/s`;
  for (const [mode, key] of [
    ["remote", "exported"],
    ["embedded", "exportedEmbedded"],
  ].filter(([, key]) => a[key])) {
    const rssRatio = b[key].rssMb / a[key].rssMb;
    console.log(
      table(
        [`events export -o ndjson (${mode})`, `at ${thousands(small)}`, `at ${thousands(large)}`, "ratio", "target"],
        [
          ["rate", rate(a[key]), rate(b[key]), "", ""],
          [
            "peak RSS of the CLI",
            `${a[key].rssMb.toFixed(0)} MB`,
            `${b[key].rssMb.toFixed(0)} MB`,
            ratio(rssRatio),
            verdict(
              `${store} events export (${mode}) peak RSS: ${thousands(large)} / ${thousands(small)} events`,
              rssRatio,
              "<=",
              1.3,
            ),
          ],
        ],
        [1, 2, 3],
      ),
    );
  }
}
