// 16. A login against the previous release's: POST /auth/login with the right password on this
// build and on the build of BENCH_PREVIOUS (default a1d4ff5, the release before failed proofs were
// counted before they are checked), each server of its own on SQLite and then on PostgreSQL, the
// two servers asked in turn A B then B A over a keep-alive connection each. What counting a proof
// atomically costs a login (a compare-and-set of the credentials row before argon2id, and its
// release after) shows as the ratio of the medians; argon2id's own time is in both.
import { join } from "node:path";
import { knob, ROOT } from "../lib/config.mjs";
import { createDatabase } from "../lib/postgres.mjs";
import { buildPrevious, compareLogins, startBuild } from "../lib/previous-build.mjs";
import { stop } from "../lib/processes.mjs";
import { progress } from "../lib/report.mjs";

/** The bar: a login costs no measurable time more than the previous release's (medians within 10%). */
const WITHIN = 0.1;

export async function measureLoginPrevious(_setup, dir) {
  const ref = process.env.BENCH_PREVIOUS ?? "a1d4ff5";
  const rounds = knob("BENCH_LOGIN_REQUESTS", 60);
  progress(`login against the previous release: building ${ref}`);
  const previousBin = await buildPrevious(ref, join(dir, "previous-release"));
  const currentBin = join(ROOT, "bin", "bizctl.js");
  for (const store of ["sqlite", "postgres"]) {
    const urls = store === "postgres" ? [await createDatabase("login_now"), await createDatabase("login_then")] : [];
    const current = await startBuild(currentBin, dir, `login-now-${store}`, { databaseUrl: urls[0] });
    const previous = await startBuild(previousBin, dir, `login-then-${store}`, { databaseUrl: urls[1] });
    try {
      progress(`login against the previous release (${store}): ${rounds} pairs`);
      await compareLogins(store === "sqlite" ? "SQLite" : "PostgreSQL", current, previous, rounds, WITHIN);
    } finally {
      await stop(current.child);
      await stop(previous.child);
    }
  }
}
