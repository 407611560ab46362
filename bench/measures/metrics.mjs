// 15. Metrics on against off (issue 31): the authenticated event read on `server start` and on
// `server start --metrics-port 0`, two servers over the same data dir measured alternately with
// autocannon; with metrics on, the read must keep at least 0.95x of its throughput off (a cost of
// at most 5%). A scrape after the rounds must have counted the reads it served.
import { readFile } from "node:fs/promises";
import { alternate } from "../lib/alternate.mjs";
import { CONNECTIONS, ROUNDS, SECONDS, WARMUP_SECONDS } from "../lib/config.mjs";
import { progress, ratio, table, thousands, verdict } from "../lib/report.mjs";

/** The reads of `route` answered 200 that the server's /metrics counted (its log says where it listens). */
async function countedReads(logFile, route) {
  const lines = (await readFile(logFile, "utf8")).split("\n").filter((l) => l.startsWith("{"));
  const url = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "metrics listening")?.metrics;
  if (!url) throw new Error(`${logFile} has no "metrics listening" line`);
  const text = await (await fetch(url)).text();
  const sample = text
    .split("\n")
    .find(
      (l) =>
        l.startsWith("http_server_request_duration_seconds_count{") &&
        l.includes(`http_route="${route}"`) &&
        l.includes('http_response_status_code="200"'),
    );
  return Number(sample?.split(" ").pop() ?? 0);
}

export async function measureMetrics(setup, dir) {
  const path = "/api/crm/v1/events/E1";
  const route = "/api/crm/v1/events/:code";
  let counted = 0;
  progress("metrics: a server without --metrics-port and one with it, on the same data dir");
  const [off, on] = await alternate(setup, dir, "metrics", path, [
    { label: `GET ${path} (Bearer), metrics off`, args: [] },
    {
      label: `GET ${path} (Bearer), --metrics-port 0`,
      args: ["--metrics-port", "0"],
      after: async (_server, logFile) => {
        counted = await countedReads(logFile, route);
      },
    },
  ]);

  console.log(
    `\n15. Metrics on against off: autocannon, ${CONNECTIONS} connections, ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up, ` +
      `${ROUNDS} rounds per server alternated,\n   two servers on the same SQLite data dir (info-level request logs to files)`,
  );
  const rows = [off, on].map((t) => [
    t.label,
    `${Math.round(t.rps)} req/s`,
    ratio(t.rps / off.rps),
    t.perRound,
    t.latency,
  ]);
  console.log(table(["target", "throughput", "vs off", "per round", "p50 / p99"], rows, [1, 2]));
  const value = on.rps / off.rps;
  console.log(
    `  ratio on / off: ${ratio(value)}  ${verdict("authenticated read, metrics on / off", value, ">=", 0.95)}`,
  );
  console.log(`  the scrape after the rounds counted ${thousands(counted)} reads of ${route} answered 200`);
  if (counted === 0) throw new Error("the metrics counted none of the reads the rounds sent");
}
