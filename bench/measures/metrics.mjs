// 15. Metrics and traces against neither (issue 31): the authenticated event read on `server
// start`, on `server start --metrics-port 0` and on `server start` tracing to an OTLP receiver in
// this process (which discards what it gets), three servers over the same data dir measured
// alternately with autocannon. With metrics on, the read must keep at least 0.95x of its
// throughput without (a cost of at most 5%); tracing's cost is informational. A scrape after the
// rounds must have counted the reads it served.
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { alternate, alternateTable } from "../lib/alternate.mjs";
import { CONNECTIONS, ROUNDS, SECONDS, WARMUP_SECONDS } from "../lib/config.mjs";
import { info, progress, ratio, thousands, verdict } from "../lib/report.mjs";

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

/** An OTLP/HTTP receiver that answers 200 to everything and keeps nothing. */
async function discardingReceiver() {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => response.writeHead(200, { "content-type": "application/json" }).end("{}"));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((done) => server.close(done)) };
}

export async function measureMetrics(setup, dir) {
  const path = "/api/crm/v1/events/E1";
  const route = "/api/crm/v1/events/:code";
  let counted = 0;
  progress("metrics: a server without metrics or traces, one with --metrics-port, one tracing, on the same data dir");
  const receiver = await discardingReceiver();
  const [off, on, traced] = await alternate(setup, dir, "metrics", path, [
    { label: `GET ${path} (Bearer), metrics off`, args: [] },
    {
      label: `GET ${path} (Bearer), --metrics-port 0`,
      args: ["--metrics-port", "0"],
      after: async (_server, logFile) => {
        counted = await countedReads(logFile, route);
      },
    },
    {
      label: `GET ${path} (Bearer), traced to a local OTLP receiver`,
      args: [],
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    },
  ]).finally(receiver.close);

  console.log(
    `\n15. Metrics and traces against neither: autocannon, ${CONNECTIONS} connections, ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up, ` +
      `${ROUNDS} rounds per server alternated,\n   three servers on the same SQLite data dir (info-level request logs to files)`,
  );
  console.log(alternateTable([off, on, traced], off, "vs neither"));
  const value = on.rps / off.rps;
  console.log(
    `  ratio on / off: ${ratio(value)}  ${verdict("authenticated read, metrics on / off", value, ">=", 0.95)}`,
  );
  const tracedValue = traced.rps / off.rps;
  console.log(`  ratio traced / off: ${ratio(tracedValue)}  ${info("authenticated read, traced / off", tracedValue)}`);
  console.log(`  the scrape after the rounds counted ${thousands(counted)} reads of ${route} answered 200`);
  if (counted === 0) throw new Error("the metrics counted none of the reads the rounds sent");
}
