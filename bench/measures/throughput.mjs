// 2. Server throughput: authenticated GET /api/crm/v1/events/{code} on the bizctl server against
// a bare Fastify route (bench/bare-server.mjs), measured alternately with autocannon.
import { join } from "node:path";
import { cannon } from "../lib/cannon.mjs";
import { BARE_SERVER, BIN, CONNECTIONS, LISTENING, ROUNDS, SECONDS, WARMUP_SECONDS } from "../lib/config.mjs";
import { cpuSeconds } from "../lib/cpu.mjs";
import { startBackground, stop } from "../lib/processes.mjs";
import { info, median, progress, ratio, table, verdict } from "../lib/report.mjs";

export async function measureThroughput({ base, remoteEnv, server, token, dataDir }, dir) {
  const BARE = /bare server listening on (http:\/\/127\.0\.0\.1:\d+)/;
  const bare = await startBackground("bare Fastify server", [BARE_SERVER], { env: base, pattern: BARE });
  const bareLogged = await startBackground("bare Fastify server --log", [BARE_SERVER, "--log"], {
    env: base,
    pattern: BARE,
    logFile: join(dir, "bare-log.log"),
  });
  // a second bizctl server on the same data dir, quiet: how much of the cost is the request log
  const quiet = await startBackground(
    "bizctl server (--log-level warn)",
    [BIN, "server", "start", "--port", "0", "--data-dir", dataDir, "--log-level", "warn"],
    {
      env: remoteEnv,
      pattern: LISTENING,
      logFile: join(dir, "quiet.log"),
    },
  );
  const bearer = { authorization: `Bearer ${token}` };
  const targets = [
    {
      key: "read",
      label: "bizctl: GET /api/crm/v1/events/E1 (Bearer)",
      pid: server.child.pid,
      url: `${server.url}/api/crm/v1/events/E1`,
      headers: bearer,
      target: 0.5,
    },
    {
      key: "isLogged",
      label: "bizctl: GET /auth/isLogged (Bearer, no event)",
      pid: server.child.pid,
      url: `${server.url}/auth/isLogged`,
      headers: bearer,
      target: 0.6,
    },
    {
      key: "health",
      label: "bizctl: GET /health (no auth, no database)",
      pid: server.child.pid,
      url: `${server.url}/health`,
      headers: {},
      target: 0.85,
    },
    { key: "bare", label: "bare Fastify: GET /x (no logger)", pid: bare.child.pid, url: `${bare.url}/x`, headers: {} },
    {
      key: "bareLogged",
      label: "bare Fastify: GET /x (bizctl's log settings)",
      pid: bareLogged.child.pid,
      url: `${bareLogged.url}/x`,
      headers: {},
    },
    // informational only: how much of the bizctl read is the request log
    {
      key: "quiet",
      label: "  event read, server --log-level warn",
      pid: quiet.child.pid,
      url: `${quiet.url}/api/crm/v1/events/E1`,
      headers: bearer,
    },
  ];
  for (const t of targets) {
    const response = await fetch(t.url, { headers: t.headers });
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${t.url} answered ${response.status}: ${body.slice(0, 300)}`);
    t.bytes = Buffer.byteLength(body);
    t.requests = 0;
    t.seconds = 0;
    t.rounds = [];
    t.cpu = 0;
  }

  progress(
    `server throughput: ${ROUNDS} rounds x ${targets.length} targets x (${WARMUP_SECONDS} s warm-up + ${SECONDS} s), ${CONNECTIONS} connections`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    // alternate the order every round so that drift (heat, neighbours) hits every target alike
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      await cannon(t.url, t.headers, WARMUP_SECONDS);
      const cpuBefore = cpuSeconds(t.pid);
      const result = await cannon(t.url, t.headers, SECONDS);
      t.cpu += cpuSeconds(t.pid) - cpuBefore;
      t.requests += result.requests.total;
      t.seconds += result.duration;
      t.rounds.push(result);
    }
  }
  await Promise.all([stop(bare.child), stop(bareLogged.child), stop(quiet.child)]);

  console.log(
    `\n2. Server throughput: autocannon, ${CONNECTIONS} connections, ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up, ${ROUNDS} rounds per target alternated`,
  );
  const rps = (t) => t.requests / t.seconds;
  const by = Object.fromEntries(targets.map((t) => [t.key, t]));
  const reference = rps(by.bare);
  const logged = rps(by.bareLogged);
  const cpuPer = (t) => (t.cpu * 1e6) / t.requests;
  const rows = targets.map((t) => [
    t.label,
    `${t.bytes} B`,
    `${Math.round(rps(t))} req/s`,
    ratio(rps(t) / reference),
    ratio(rps(t) / logged),
    `${(1000 / rps(t) - 1000 / reference).toFixed(3)} ms`,
    Number.isNaN(t.cpu) ? "?" : `${Math.round(cpuPer(t))} µs`,
    Number.isNaN(t.cpu) ? "?" : ratio(cpuPer(by.bare) / cpuPer(t)),
    t.rounds.map((r) => Math.round(r.requests.total / r.duration)).join(" / "),
    `${median(t.rounds.map((r) => r.latency.p50))} / ${median(t.rounds.map((r) => r.latency.p99))} ms`,
  ]);
  console.log(
    table(
      [
        "target",
        "body",
        "throughput",
        "vs bare",
        "vs bare+log",
        "extra/request",
        "server CPU/request",
        "by CPU vs bare",
        "per round",
        "p50 / p99",
      ],
      rows,
      [1, 2, 3, 4, 5, 6, 7],
    ),
  );
  for (const t of targets.filter((t) => t.target)) {
    const name =
      t.key === "read" ? "server throughput vs bare Fastify" : `${t.label.replace(/ \(.*$/, "")} vs bare Fastify`;
    const value = rps(t) / reference;
    console.log(`  ${t.label}: ${ratio(value)} of bare  ${verdict(name, value, ">=", t.target)}`);
    console.log(
      `  ${" ".repeat(t.label.length)}  ${ratio(rps(t) / logged)} of bare with bizctl's log settings  ${info(`${name.replace(/ vs bare Fastify$/, "")} vs bare Fastify with the same logs`, rps(t) / logged)}`,
    );
  }
  console.log(
    "  (bare: bench/bare-server.mjs without a logger; bare+log: the same with the default server's log settings, one\n" +
      "  line per request at info, the same redaction; extra/request: 1 s / throughput minus the bare one, a rough\n" +
      "  server CPU cost per request; server CPU/request: the server process's user + system time (/proc) over the\n" +
      "  requests it answered, which the machine's other load disturbs less than throughput; by CPU vs bare: the bare\n" +
      "  server's CPU/request over this one's, an informational cross-check of the throughput ratios; the bizctl server\n" +
      "  runs as `server start` does by default, its log to a file)",
  );
}
