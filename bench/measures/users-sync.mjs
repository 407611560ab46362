// 16. `users sync` at BENCH_SYNC_USERS (100 000) users, through the binary against a server of its
// own on SQLite: the file is first imported plainly (`users import`, the reference), then synced
// once, planned and then applied (every user adopted by the source: one PATCH each, the apply at
// its heaviest, timed alone), then an HR file of the same size with 1% of titles edited, 0.5% of
// users gone and 0.5% new is planned (`--plan`) and the plan applied (`--apply`). Informational:
// the plan's time against the import's (the plan reads the directory once and writes nothing),
// and the rates of the two applies against the import's rate.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { BIN, knob } from "../lib/config.mjs";
import { freshServer } from "../lib/fresh-server.mjs";
import { run, stop } from "../lib/processes.mjs";
import { info, progress, ratio, table, thousands } from "../lib/report.mjs";

const USERS = knob("BENCH_SYNC_USERS", 100_000);
const HEADER = "User Name,First Name,Last Name,E-mail,Department,Title";

function row(i, title = "Engineer") {
  return `sync${i},Given${i},"Family, ${i}",sync${i}@example.com,Dept ${i % 17},${title}`;
}

/** The HR file of the next day: every 100th title edited, every 200th user gone, as many new. */
function nextDay() {
  const lines = [HEADER];
  for (let i = 1; i <= USERS; i++) {
    if (i % 200 === 0) continue;
    lines.push(row(i, i % 100 === 1 ? "Senior Engineer" : "Engineer"));
  }
  for (let i = 1; i <= Math.floor(USERS / 200); i++) lines.push(row(USERS + i));
  return `${lines.join("\n")}\n`;
}

async function timed(env, args) {
  const done = await run([BIN, ...args, "--json"], { env });
  return { ms: done.ms, result: JSON.parse(done.stdout) };
}

export async function measureUsersSync({ base }, dir) {
  const { server, env } = await freshServer(base, dir, "users-sync");
  try {
    const first = join(dir, "sync-day1.csv");
    const second = join(dir, "sync-day2.csv");
    const planFile = join(dir, "sync.plan.json");
    const lines = [HEADER];
    for (let i = 1; i <= USERS; i++) lines.push(row(i));
    await writeFile(first, `${lines.join("\n")}\n`);
    await writeFile(second, nextDay());

    progress(`users sync: import of ${thousands(USERS)} users (the reference)`);
    const imported = await timed(env, ["users", "import", first]);
    if (imported.result.created !== USERS) throw new Error(`users import created ${imported.result.created}`);
    // the adoption planned, then applied: the apply alone is a write of an update to every user
    const adoptionFile = join(dir, "sync-adoption.plan.json");
    progress(`users sync: plan of the first sync, ${thousands(USERS)} users to adopt`);
    await timed(env, ["users", "sync", first, "--source", "hr", "--plan", adoptionFile]);
    progress(`users sync: apply of the first sync, ${thousands(USERS)} users adopted`);
    const adopted = await timed(env, ["users", "sync", first, "--source", "hr", "--apply", adoptionFile]);
    if (adopted.result.updated !== USERS) throw new Error(`users sync adopted ${adopted.result.updated}`);
    progress(`users sync: plan of the next day's file against ${thousands(USERS)} users`);
    const planned = await timed(env, ["users", "sync", second, "--source", "hr", "--plan", planFile]);
    const plan = planned.result;
    const changes = plan.creates.length + plan.updates.length + plan.deactivations.length;
    progress(`users sync: apply of ${thousands(changes)} changes`);
    const applied = await timed(env, ["users", "sync", second, "--source", "hr", "--apply", planFile]);

    console.log(
      `\n16. users sync at ${thousands(USERS)} users (CSV), remote, SQLite: plan and apply against users import`,
    );
    const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
    console.log(
      table(
        ["run", "changes", "time", "changes/s"],
        [
          ["users import (reference)", thousands(USERS), s(imported.ms), (USERS / (imported.ms / 1000)).toFixed(0)],
          [
            "users sync --apply, every user adopted",
            thousands(USERS),
            s(adopted.ms),
            (USERS / (adopted.ms / 1000)).toFixed(0),
          ],
          ["users sync --plan (next day)", `${thousands(changes)} planned`, s(planned.ms), ""],
          [
            "users sync --apply (next day)",
            thousands(changes),
            s(applied.ms),
            (changes / (applied.ms / 1000)).toFixed(0),
          ],
        ],
        [1, 2, 3],
      ),
    );
    const planCost = planned.ms / imported.ms;
    console.log(
      `  plan time / import time: ${ratio(planCost)}  ${info("users sync --plan / users import (time)", planCost)}`,
    );
    const adoptRate = USERS / adopted.ms / (USERS / imported.ms);
    console.log(
      `  adopting apply rate / import rate: ${ratio(adoptRate)}  ${info("users sync --apply, all adopted / users import (rate)", adoptRate)}`,
    );
    const applyRate = changes / applied.ms / (USERS / imported.ms);
    console.log(
      `  --apply rate / import rate: ${ratio(applyRate)}  ${info("users sync --apply / users import (rate)", applyRate)}`,
    );
  } finally {
    await stop(server.child);
  }
}
