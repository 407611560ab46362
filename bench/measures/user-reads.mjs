// 4. User reads at scale: server-side time (app.inject, in-process from src/ through tsx, see
// bench/user-reads.mts) of the User list reads at 1 000 and 100 000 users, on SQLite and on PostgreSQL.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { knob, USER_READS_SCRIPT } from "../lib/config.mjs";
import { createDatabase } from "../lib/postgres.mjs";
import { run } from "../lib/processes.mjs";
import { info, ms2, progress, ratio, table, thousands, verdict } from "../lib/report.mjs";

/** Seeds and measures on one store; the script's JSON result. */
async function readsOn(store, base, dir) {
  const dataDir = join(dir, `user-reads-${store}`);
  const args = ["--import", "tsx", USER_READS_SCRIPT, dataDir];
  if (store === "postgres") args.push(await createDatabase("user_reads"));
  const result = await run(args, { env: base, forwardStderr: true });
  await rm(dataDir, { recursive: true, force: true });
  try {
    return JSON.parse(result.stdout.trim().split("\n").pop());
  } catch {
    throw new Error(`bench/user-reads.mts: stdout is not the expected JSON: ${result.stdout.slice(0, 500)}`);
  }
}

export async function measureUserReads({ base }, dir) {
  const users = knob("BENCH_FILTER_USERS", 100_000);
  progress(
    `user reads: the app in-process from src/ (tsx), ${thousands(users)} users seeded in two phases, on SQLite then PostgreSQL (most of the time is the seeding)`,
  );
  const results = [await readsOn("sqlite", base, dir), await readsOn("postgres", base, dir)];
  const { sizes } = results[0];
  const small = sizes.small + 1; // and the admin
  const large = sizes.large + 1;
  console.log(
    `\n4. User reads at scale: GET /Resources?resourcetypes=User&… through app.inject() (in-process, whole Fastify pipeline,\n` +
      `   no socket), as admin, sequential requests after a warm-up, at ${thousands(small)} then ${thousands(large)} users`,
  );
  for (const data of results) {
    const perUser = (data.seedSeconds.large * 1000) / (sizes.large - sizes.small);
    console.log(
      `  ${data.store}: seeding (insertResource + credential per user, as createResource writes them) ${thousands(sizes.large - sizes.small)} users ` +
        `in ${data.seedSeconds.large.toFixed(1)} s (${perUser.toFixed(2)} ms per user); ${thousands(data.resourceValues)} indexed values`,
    );
  }
  const rows = results.flatMap((data) =>
    data.reads.map((read) => {
      const value = read.large.medianMs / read.small.medianMs;
      return [
        data.store,
        read.key,
        `${ms2(read.small.medianMs)} / ${ms2(read.small.p90Ms)}`,
        `${ms2(read.large.medianMs)} / ${ms2(read.large.p90Ms)}`,
        `${read.small.totalResults} / ${read.large.totalResults}`,
        ratio(value),
        read.informational
          ? info(`${data.store} ${read.key}: ${thousands(large)} / ${thousands(small)} users`, value)
          : verdict(`${data.store} ${read.key}: ${thousands(large)} / ${thousands(small)} users`, value, "<=", 1.5),
      ];
    }),
  );
  console.log(
    table(
      [
        "store",
        "read",
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
  const pairs = results.flatMap((data) =>
    data.reads
      .filter((read) => read.countOf)
      .map((read) => {
        const count = data.reads.find((one) => one.key === read.countOf);
        const value = read.large.medianMs / count.large.medianMs;
        const name = `${data.store} ${read.key.replace(", count=20", "")}: a page of 20 / count=0 at ${thousands(large)} users`;
        return [
          data.store,
          read.key.replace(", count=20", ""),
          ms2(read.large.medianMs),
          ms2(count.large.medianMs),
          thousands(read.large.totalResults),
          ratio(value),
          verdict(name, value, "<=", 1.5),
        ];
      }),
  );
  console.log(
    `\n  A filter that matches a share of the users, at ${thousands(large)} users: its page of 20 against its total alone (count=0)`,
  );
  console.log(table(["store", "filter", "page of 20", "count=0", "matches", "ratio", "target"], pairs, [2, 3, 4, 5]));
  console.log(
    "  (the users are chosen so that both sizes hold the looked-up user and the same co matches: only the data around\n" +
      "  them grows; a sw or active filter matches a share of the users, so its total grows with them: those reads ask for\n" +
      "  the page the small size fills, so that only the count of the matches grows; an OFFSET is read from the nearer end,\n" +
      "  so the page in the middle is the deepest one)",
  );
}
