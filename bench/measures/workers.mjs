// 7. `server start --workers 2` against `--workers 1` (issue 8): the authenticated event read on two
// servers over the same data dir, measured alternately with autocannon.
//
// The machine the reference figures come from has 2 cores, and autocannon runs on them too: with one
// worker the server and the load generator each have a core; with two, the workers and autocannon
// share both. So the ratio here is a floor for what --workers gives on a host where the load comes
// from elsewhere, not a promise of N times; the row is informational (no target).
import { alternate, alternateTable } from "../lib/alternate.mjs";
import { CONNECTIONS, ROUNDS, SECONDS, WARMUP_SECONDS } from "../lib/config.mjs";
import { info, progress, ratio } from "../lib/report.mjs";

export async function measureWorkers(setup, dir) {
  const path = "/api/crm/v1/events/E1";
  progress("--workers: starting a server with 1 worker and one with 2 on the same data dir");
  const [one, two] = await alternate(setup, dir, "workers", path, [
    { label: `GET ${path} (Bearer), server start --workers 1`, args: ["--workers", "1"] },
    { label: `GET ${path} (Bearer), server start --workers 2`, args: ["--workers", "2"] },
  ]);

  console.log(
    `\n7. --workers 2 vs --workers 1: autocannon, ${CONNECTIONS} connections, ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up, ` +
      `${ROUNDS} rounds per target alternated,\n   two servers on the same SQLite data dir (info-level request logs to files)`,
  );
  console.log(alternateTable([one, two], one, "vs 1 worker"));
  const value = two.rps / one.rps;
  console.log(
    `  ratio --workers 2 / --workers 1: ${ratio(value)}  ${info("authenticated read, --workers 2 / --workers 1", value)}`,
  );
  console.log(
    "  (informational: autocannon runs on the same cores as the server, so with two workers the load generator and\n" +
      "  the workers compete for the machine's cores; on a host whose load comes over the network the gain is larger)",
  );
}
