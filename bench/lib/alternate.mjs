// Two or more servers over the same data dir, each started with its own flags, measured with
// autocannon in alternating rounds (the order reversed every other round), so that the machine's
// drifting load weighs on each alike: the comparison sections 7 and 15 make.
import { join } from "node:path";
import { cannon } from "./cannon.mjs";
import { BIN, CONNECTIONS, LISTENING, ROUNDS, SECONDS, WARMUP_SECONDS } from "./config.mjs";
import { startBackground, stop } from "./processes.mjs";
import { median, progress, ratio, table } from "./report.mjs";

/**
 * `variants`: `{ label, args, env?, after? }` each: the extra flags of its `server start`, and
 * what to do with its server and its log file once the rounds are over; `name` names the log
 * files. Each variant's requests per second over every round, each round's throughput and the
 * latency, in the order given.
 */
export async function alternate({ remoteEnv, token, dataDir }, dir, name, path, variants) {
  const headers = { authorization: `Bearer ${token}` };
  const servers = [];
  try {
    for (const [i, variant] of variants.entries()) {
      const args = [BIN, "server", "start", "--port", "0", "--data-dir", dataDir, ...variant.args];
      const env = { ...remoteEnv, ...variant.env };
      servers.push(
        await startBackground(`bizctl server (${variant.label})`, args, {
          env,
          pattern: LISTENING,
          logFile: join(dir, `${name}-${i}.log`),
        }),
      );
    }
    const targets = servers.map((server, i) => ({
      ...variants[i],
      server,
      logFile: join(dir, `${name}-${i}.log`),
      url: `${server.url}${path}`,
      rounds: [],
    }));
    for (const t of targets) {
      const response = await fetch(t.url, { headers });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${t.url} answered ${response.status}: ${body.slice(0, 300)}`);
    }
    progress(
      `${name}: ${ROUNDS} rounds x ${targets.length} servers x (${WARMUP_SECONDS} s warm-up + ${SECONDS} s), ${CONNECTIONS} connections`,
    );
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) {
        await cannon(t.url, headers, WARMUP_SECONDS);
        t.rounds.push(await cannon(t.url, headers, SECONDS));
      }
    }
    for (const t of targets) await t.after?.(t.server, t.logFile);
    return targets.map((t) => ({
      label: t.label,
      rps: t.rounds.reduce((n, r) => n + r.requests.total, 0) / t.rounds.reduce((s, r) => s + r.duration, 0),
      perRound: t.rounds.map((r) => Math.round(r.requests.total / r.duration)).join(" / "),
      latency: `${median(t.rounds.map((r) => r.latency.p50))} / ${median(t.rounds.map((r) => r.latency.p99))} ms`,
    }));
  } finally {
    await Promise.all(servers.map((s) => stop(s.child)));
  }
}

/** The table of what alternate() measured, each variant's throughput also as a ratio to `baseline`'s. */
export function alternateTable(results, baseline, vsLabel) {
  const rows = results.map((t) => [
    t.label,
    `${Math.round(t.rps)} req/s`,
    ratio(t.rps / baseline.rps),
    t.perRound,
    t.latency,
  ]);
  return table(["target", "throughput", vsLabel, "per round", "p50 / p99"], rows, [1, 2]);
}
