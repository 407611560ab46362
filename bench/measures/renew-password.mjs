// 5. renewPassword enumeration timing: median latency of POST /renewPassword for an existing and an
// unknown user, interleaved, over HTTP against a server started with a high --login-rate-limit.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "undici";
import { BIN, knob, LISTENING } from "../lib/config.mjs";
import { run, startBackground, stop } from "../lib/processes.mjs";
import { median, ms2, progress, quantile, ratio, table, verdict } from "../lib/report.mjs";

export async function measureRenewPassword({ remoteEnv, dataDir }, dir) {
  const requests = knob("BENCH_RENEW_REQUESTS", 200);
  const warmups = 20;
  progress(`renewPassword timing: a user with an e-mail, a server with --login-rate-limit 100000`);
  await run([BIN, "users", "create", "--user-name", "jdoe", "--email", "jdoe@example.com"], { env: remoteEnv });
  const server = await startBackground(
    "bizctl server (--login-rate-limit 100000)",
    [BIN, "server", "start", "--port", "0", "--data-dir", dataDir, "--login-rate-limit", "100000"],
    {
      env: remoteEnv,
      pattern: LISTENING,
      logFile: join(dir, "renew.log"),
    },
  );
  const outbox = join(dataDir, "outbox");
  const mails = () => (existsSync(outbox) ? readdirSync(outbox).filter((f) => f.endsWith(".eml")).length : 0);
  const mailsBefore = mails();
  // one keep-alive connection, as a careful attacker would use: no connection set-up in the times
  const client = new Client(server.url, { pipelining: 1 });
  const cases = [
    { key: "existing", label: 'existing user  {"userName":"jdoe"}', userName: "jdoe", times: [] },
    { key: "missing", label: 'unknown user   {"userName":"nobody-9f3c"}', userName: "nobody-9f3c", times: [] },
  ];
  const bodies = new Set();
  const afterExisting = [];
  const afterMissing = [];
  let previous;
  async function once(c, measured) {
    const payload = JSON.stringify({ userName: c.userName });
    const started = process.hrtime.bigint();
    const response = await client.request({
      method: "POST",
      path: "/renewPassword",
      headers: { "content-type": "application/json" },
      body: payload,
    });
    const text = await response.body.text();
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (response.statusCode !== 202) {
      throw new Error(`POST /renewPassword ${payload} answered ${response.statusCode}: ${text.slice(0, 300)}`);
    }
    bodies.add(text);
    if (measured) {
      c.times.push(elapsed);
      if (previous) (previous === "existing" ? afterExisting : afterMissing).push(elapsed);
    }
    previous = c.key;
  }
  progress(`renewPassword timing: ${warmups} warm-up + ${requests} measured requests each, interleaved A B B A`);
  try {
    for (let i = 0; i < warmups + requests; i++) {
      // A B, B A, A B, …: each kind follows each kind equally often, so that the background work an
      // existing user starts (look-up, token, e-mail file) weighs on both kinds alike
      const pair = i % 2 === 0 ? [cases[0], cases[1]] : [cases[1], cases[0]];
      for (const c of pair) await once(c, i >= warmups);
    }
  } finally {
    await client.close();
  }
  // the mail is written after the answer: wait for it (at most 5 s) to show the work was done
  const expected = warmups + requests;
  for (let waited = 0; mails() - mailsBefore < expected && waited < 5000; waited += 100) await sleep(100);
  const mailsWritten = mails() - mailsBefore;
  await stop(server.child);

  console.log(
    `\n5. renewPassword enumeration timing: POST /renewPassword over HTTP (undici, one keep-alive connection) to\n` +
      `   \`server start --login-rate-limit 100000\`, ${requests} requests each after ${warmups} warm-ups, interleaved A B B A`,
  );
  const [existing, missing] = cases;
  const rows = cases.map((c) => [
    c.label,
    ms2(median(c.times)),
    ms2(quantile(c.times, 0.9)),
    `${ms2(quantile(c.times, 0.25))}–${ms2(quantile(c.times, 0.75))}`,
  ]);
  rows.push([
    "  (informational) any request right after an existing-user one",
    ms2(median(afterExisting)),
    ms2(quantile(afterExisting, 0.9)),
    "",
  ]);
  rows.push([
    "  (informational) any request right after an unknown-user one",
    ms2(median(afterMissing)),
    ms2(quantile(afterMissing, 0.9)),
    "",
  ]);
  console.log(table(["request", "median", "p90", "IQR"], rows, [1, 2]));
  const value = median(existing.times) / median(missing.times);
  console.log(
    `  ratio of the medians existing / unknown: ${ratio(value)}  ${verdict("renewPassword median existing / unknown user", value, "within", 0.2)}`,
  );
  console.log(
    `  p90 ratio ${ratio(quantile(existing.times, 0.9) / quantile(missing.times, 0.9))}; ` +
      `answers: ${bodies.size === 1 ? "byte-identical for both" : `${bodies.size} different bodies (!)`}; ` +
      `reset e-mails written for jdoe: ${mailsWritten} of ${expected} requests`,
  );
}
