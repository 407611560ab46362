// 7. `server start --workers 2` against `--workers 1` (issue 8): the authenticated event read on two
// servers over the same data dir, measured alternately with autocannon.
//
// The machine the reference figures come from has 2 cores, and autocannon runs on them too: with one
// worker the server and the load generator each have a core; with two, the workers and autocannon
// share both. So the ratio here is a floor for what --workers gives on a host where the load comes
// from elsewhere, not a promise of N times; the row is informational (no target).
import { join } from "node:path";
import { cannon } from "../lib/cannon.mjs";
import { BIN, CONNECTIONS, LISTENING, ROUNDS, SECONDS, WARMUP_SECONDS } from "../lib/config.mjs";
import { startBackground, stop } from "../lib/processes.mjs";
import { info, median, progress, ratio, table } from "../lib/report.mjs";

export async function measureWorkers({ remoteEnv, token, dataDir }, dir) {
  const path = "/api/crm/v1/events/E1";
  const headers = { authorization: `Bearer ${token}` };
  const start = (workers) =>
    startBackground(
      `bizctl server --workers ${workers}`,
      [BIN, "server", "start", "--port", "0", "--data-dir", dataDir, "--workers", String(workers)],
      { env: remoteEnv, pattern: LISTENING, logFile: join(dir, `workers-${workers}.log`) },
    );
  progress("--workers: starting a server with 1 worker and one with 2 on the same data dir");
  const servers = [await start(1), await start(2)];
  const targets = servers.map((server, i) => ({
    label: `GET ${path} (Bearer), server start --workers ${i + 1}`,
    url: `${server.url}${path}`,
    requests: 0,
    seconds: 0,
    rounds: [],
  }));
  try {
    for (const t of targets) {
      const response = await fetch(t.url, { headers });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${t.url} answered ${response.status}: ${body.slice(0, 300)}`);
    }
    progress(
      `--workers: ${ROUNDS} rounds x 2 targets x (${WARMUP_SECONDS} s warm-up + ${SECONDS} s), ${CONNECTIONS} connections`,
    );
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) {
        await cannon(t.url, headers, WARMUP_SECONDS);
        const result = await cannon(t.url, headers, SECONDS);
        t.requests += result.requests.total;
        t.seconds += result.duration;
        t.rounds.push(result);
      }
    }
  } finally {
    await Promise.all(servers.map((s) => stop(s.child)));
  }

  console.log(
    `\n7. --workers 2 vs --workers 1: autocannon, ${CONNECTIONS} connections, ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up, ` +
      `${ROUNDS} rounds per target alternated,\n   two servers on the same SQLite data dir (info-level request logs to files)`,
  );
  const rps = (t) => t.requests / t.seconds;
  const [one, two] = targets;
  const rows = targets.map((t) => [
    t.label,
    `${Math.round(rps(t))} req/s`,
    ratio(rps(t) / rps(one)),
    t.rounds.map((r) => Math.round(r.requests.total / r.duration)).join(" / "),
    `${median(t.rounds.map((r) => r.latency.p50))} / ${median(t.rounds.map((r) => r.latency.p99))} ms`,
  ]);
  console.log(table(["target", "throughput", "vs 1 worker", "per round", "p50 / p99"], rows, [1, 2]));
  const value = rps(two) / rps(one);
  console.log(
    `  ratio --workers 2 / --workers 1: ${ratio(value)}  ${info("authenticated read, --workers 2 / --workers 1", value)}`,
  );
  console.log(
    "  (informational: autocannon runs on the same cores as the server, so with two workers the load generator and\n" +
      "  the workers compete for the machine's cores; on a host whose load comes over the network the gain is larger)",
  );
}
