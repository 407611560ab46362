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
import pg from "pg";
import { harness } from "./lib/harness.mjs";
import { summary } from "./lib/report.mjs";
import { measureSoak, reportSoak } from "./measures/soak.mjs";

const POSTGRES_URL = process.env.BIZCTL_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const backends = (process.env.SOAK_BACKENDS ?? "sqlite,postgres").split(",").map((s) => s.trim());

async function maintenance(statement) {
  const client = new pg.Client(POSTGRES_URL);
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

const databases = [];

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
        const name = `bizctl_soak_${process.pid}_${Date.now()}`;
        await maintenance(`create database ${name}`);
        databases.push(name);
        const url = new URL(POSTGRES_URL);
        url.pathname = `/${name}`;
        rows.push(await measureSoak(base, workDir, "postgres", url.toString()));
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
  async () => {
    for (const name of databases) await maintenance(`drop database if exists ${name} with (force)`);
  },
);
