// 18. Groups at scale: what a group's size and a User's number of groups cost (medians of alternating rounds) (bench/group-scale.mts,
// in-process from src/ through tsx), on SQLite and on PostgreSQL, each as a ratio in the same run.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { knob, ROOT } from "../lib/config.mjs";
import { createDatabase } from "../lib/postgres.mjs";
import { run } from "../lib/processes.mjs";
import { ms2, progress, ratio, table, thousands, verdict } from "../lib/report.mjs";

const SCRIPT = join(ROOT, "bench", "group-scale.mts");

async function scaleOn(store, base, dir) {
  const dataDir = join(dir, `group-scale-${store}`);
  const args = ["--import", "tsx", SCRIPT, dataDir];
  if (store === "postgres") args.push(await createDatabase("group_scale"));
  const result = await run(args, { env: base, forwardStderr: true });
  await rm(dataDir, { recursive: true, force: true });
  return JSON.parse(result.stdout.trim().split("\n").pop());
}

export async function measureGroupsScale({ base }, dir) {
  const members = knob("BENCH_GROUP_MEMBERS", 10_000);
  progress(`groups: a group of ${thousands(members)} members and a User in many groups, on SQLite then PostgreSQL`);
  const results = [await scaleOn("sqlite", base, dir), await scaleOn("postgres", base, dir)];
  const { patchSize } = results[0];
  console.log(
    `\n18. Groups at scale: through app.inject() (in-process, whole Fastify pipeline, no socket), as admin;\n` +
      `   a group of ${thousands(results[0].members)} members built in PATCHes of ${thousands(patchSize)} adds; ` +
      `a User in ${results[0].user.groups.many} groups against a User in ${results[0].user.groups.one}`,
  );
  const rows = results.flatMap((data) => {
    const size = thousands(data.members);
    const many = data.user.groups.many;
    const into = thousands(data.members - patchSize);
    const measures = [
      [
        `PATCH of ${thousands(patchSize)} adds: into ${into} / into 0 members`,
        data.patch.addMs.big,
        data.patch.addMs.empty,
      ],
      [
        `PATCH of ${thousands(patchSize)} removes: from ${into} / from 0 others`,
        data.patch.removeMs.big,
        data.patch.removeMs.empty,
      ],
      [`group read without members: ${size} / 10 members`, data.read.bigMs, data.read.smallMs],
      [`a membership change of a User in ${many} / 1 groups`, data.user.changeMs.many, data.user.changeMs.one],
      [`GET /auth/isLogged by a User in ${many} / 1 groups`, data.user.meMs.many, data.user.meMs.one],
    ];
    return measures.map(([label, large, small]) => [
      data.store,
      label,
      ms2(large),
      ms2(small),
      `${ratio(large / small)}  ${verdict(`${data.store} groups: ${label}`, large / small, "<=", 1.5)}`,
    ]);
  });
  console.log(table(["store", "measure", "large", "small", "ratio"], rows, [2, 3]));
  for (const data of results) {
    const build = data.patch.buildMs.map((value) => value.toFixed(1)).join(", ");
    console.log(`  ${data.store}: the ${data.patch.buildMs.length} PATCHes that built the group, in ms: ${build}`);
  }
}
