// 20. `users search` at scale: server-side time (app.inject, in-process from src/ through tsx, the
// script of section 4, bench/user-reads.mts, with BENCH_USER_READS=search) of GET
// /Resources?resourcetypes=User&search=… at 1 000 and 100 000 users, on SQLite and on PostgreSQL.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { knob, USER_READS_SCRIPT } from "../lib/config.mjs";
import { createDatabase } from "../lib/postgres.mjs";
import { run } from "../lib/processes.mjs";
import { info, ms2, progress, ratio, table, thousands, verdict } from "../lib/report.mjs";

/** Seeds and searches on one store; the script's JSON result. */
async function searchesOn(store, base, dir) {
  const dataDir = join(dir, `users-search-${store}`);
  const args = ["--import", "tsx", USER_READS_SCRIPT, dataDir];
  if (store === "postgres") args.push(await createDatabase("users_search"));
  const result = await run(args, { env: { ...base, BENCH_USER_READS: "search" }, forwardStderr: true });
  await rm(dataDir, { recursive: true, force: true });
  try {
    return JSON.parse(result.stdout.trim().split("\n").pop());
  } catch {
    throw new Error(`bench/user-reads.mts (search): stdout is not the expected JSON: ${result.stdout.slice(0, 500)}`);
  }
}

export async function measureUsersSearch({ base }, dir) {
  const users = knob("BENCH_FILTER_USERS", 100_000);
  progress(
    `users search: the app in-process from src/ (tsx), ${thousands(users)} users seeded in two phases, on SQLite then PostgreSQL (most of the time is the seeding)`,
  );
  const results = [await searchesOn("sqlite", base, dir), await searchesOn("postgres", base, dir)];
  const { sizes } = results[0];
  const small = sizes.small + 1; // and the admin
  const large = sizes.large + 1;
  console.log(
    `\n20. users search at scale: GET /Resources?resourcetypes=User&search=… through app.inject() (in-process, whole\n` +
      `   Fastify pipeline, no socket), as admin, sequential requests after a warm-up, at ${thousands(small)} then ${thousands(large)} users`,
  );
  const rows = results.flatMap((data) =>
    data.reads.map((read) => {
      const value = read.large.medianMs / read.small.medianMs;
      const name = `${data.store} ${read.key}: ${thousands(large)} / ${thousands(small)} users`;
      return [
        data.store,
        read.key,
        `${ms2(read.small.medianMs)} / ${ms2(read.small.p90Ms)}`,
        `${ms2(read.large.medianMs)} / ${ms2(read.large.p90Ms)}`,
        `${read.small.totalResults} / ${read.large.totalResults}`,
        ratio(value),
        read.informational ? info(name, value) : verdict(name, value, "<=", 1.5),
      ];
    }),
  );
  console.log(
    table(
      [
        "store",
        "search",
        `median / p90 at ${thousands(small)}`,
        `median / p90 at ${thousands(large)}`,
        "totalResults",
        "ratio",
        "target",
      ],
      rows,
      [2, 3, 4, 5],
    ),
  );
  console.log(
    '  (each targeted search finds the same users at both sizes: only the data around them grows; "us" (two\n' +
      '  characters: a prefix of every user name) and "example.com" (in every e-mail) find every user, so their\n' +
      "  totalResults, counted, and the ranking of their matches grow with the directory: informational)",
  );
}
