#!/usr/bin/env node
// `npm run soak` (= `npm run build && node bench/soak.mjs`): a minute of a realistic mix at 50
// connections against `server start`, on SQLite and on PostgreSQL (measures/soak.mjs), each with
// its bars (no error; resident set growth <= 20% after the warm-up) and PASS/MISS. Not part of
// `npm run bench` (two minutes of saturating load) nor of CI.
//
// PostgreSQL: the machine's server (BIZCTL_TEST_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres),
// on a database of its own, created for the run and dropped after it.
//
// Knobs: SOAK_SECONDS (60), SOAK_WARMUP_SECONDS (10), SOAK_CONNECTIONS (50),
// SOAK_BACKENDS ("sqlite,postgres").
//
// Like the bench it prints PASS/MISS and exits 0 whatever the numbers, 1 only when something could
// not be measured; everything runs in a fresh temporary directory and the servers are always stopped.
import { loadavg } from "node:os";
import { join } from "node:path";
import { harness } from "./lib/harness.mjs";
import { createDatabase, dropDatabases } from "./lib/postgres.mjs";
import { summary } from "./lib/report.mjs";
import { measureSoak, reportSoak } from "./measures/soak.mjs";

const backends = (process.env.SOAK_BACKENDS ?? "sqlite,postgres").split(",").map((s) => s.trim());

await harness(
  "soak",
  async (workDir) => {
    const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("BIZCTL_")));
    Object.assign(base, { XDG_CONFIG_HOME: join(workDir, "xdg-config"), XDG_DATA_HOME: join(workDir, "xdg-data") });
    const rows = [];
    for (const backend of backends) {
      if (backend === "sqlite") {
        rows.push(await measureSoak(base, workDir, "sqlite"));
      } else if (backend === "postgres") {
        rows.push(await measureSoak(base, workDir, "postgres", await createDatabase("soak")));
      } else {
        throw new Error(`SOAK_BACKENDS: unknown backend '${backend}' (sqlite, postgres)`);
      }
      console.log(
        `  (load average after ${backend}: ${loadavg()
          .map((l) => l.toFixed(1))
          .join(" ")})`,
      );
    }
    reportSoak(rows);
    summary();
  },
  dropDatabases,
);
