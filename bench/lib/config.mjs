// Paths, fixed settings and the knobs (environment variables) every measure reads.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const BIN = join(ROOT, "bin", "bizctl.js");
export const BARE_SERVER = join(ROOT, "bench", "bare-server.mjs");
export const USER_READS_SCRIPT = join(ROOT, "bench", "user-reads.mts");
export const NODE = process.execPath;
export const PKG = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

export const PASSWORD = "correct horse battery staple 42";
export const EVENT_COUNT = 20; // one default page of `events list`
/** what `server start` prints on stderr once it listens; the first group is the URL */
export const LISTENING = /bizctl server listening on (http:\/\/127\.0\.0\.1:\d+)/;

/** A positive integer from the environment, or the reference setting. */
export function knob(name, fallback) {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}
export const RUNS = knob("BENCH_RUNS", 15);
export const WARMUPS = 2;
export const IMPORT_RUNS = knob("BENCH_IMPORT_RUNS", 7);
export const IMPORT_WARMUPS = 1;
export const SECONDS = knob("BENCH_SECONDS", 5);
export const WARMUP_SECONDS = 1;
export const ROUNDS = knob("BENCH_ROUNDS", 2);
export const CONNECTIONS = 10;
