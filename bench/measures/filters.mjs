// 4. Resource filters at scale: server-side time (app.inject, in-process from src/ through tsx, see
// bench/filters.mts) of `userName eq` and `emails.value co` filters at 1 000 and 100 000 users.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { FILTERS_SCRIPT, knob } from "../lib/config.mjs";
import { run } from "../lib/processes.mjs";
import { ms2, progress, ratio, table, thousands, verdict } from "../lib/report.mjs";

export async function measureFilters({ base }, dir) {
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
