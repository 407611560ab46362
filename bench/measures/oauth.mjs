// 6. OAuth-signed vs Bearer throughput on GET /api/crm/v1/events/{code}: token credentials from one
// three-legged flow, every autocannon request signed with a nonce of its own. The headers are signed
// before each measurement (a real client signs on its own machine; here the load generator shares
// the server's two cores, and signing live took about as much CPU as the server's whole answer):
// autocannon's setupRequest takes the next one, and signs afresh only if they run out. The server's
// CPU per request (/proc) is reported beside the throughput: other load disturbs it much less.

import { cannon } from "../lib/cannon.mjs";
import { CONNECTIONS, ROUNDS, SECONDS, WARMUP_SECONDS } from "../lib/config.mjs";
import { cpuSeconds } from "../lib/cpu.mjs";
import { httpCall, oauthFlow, signHeader } from "../lib/oauth.mjs";
import { median, progress, ratio, table, verdict } from "../lib/report.mjs";

export async function measureOAuth({ server, token }) {
  progress("OAuth: consumer, three-legged flow, one signed request");
  const { signer, access } = await oauthFlow(server.url, token);
  const path = "/api/crm/v1/events/E1";
  const url = `${server.url}${path}`; // autocannon sends Host: 127.0.0.1:PORT, the host signed here
  const sign = () => signHeader(signer, { method: "GET", url }, access);
  const check = await fetch(url, { headers: { authorization: sign() } });
  const checkBody = await check.text();
  if (check.status !== 200) {
    throw new Error(
      `OAuth: a request signed with the token credentials was refused (${check.status}), so the signed throughput cannot be measured: ${checkBody.slice(0, 400)}`,
    );
  }
  const bearerBody = await httpCall("Bearer check", url, { headers: { authorization: `Bearer ${token}` } });
  if (bearerBody !== checkBody) throw new Error("OAuth: the signed and the Bearer answers differ");

  // the client's own cost of a signature (it runs on the same two cores as the server)
  for (let i = 0; i < 200; i++) sign();
  const signStarted = process.hrtime.bigint();
  const SIGNS = 2000;
  for (let i = 0; i < SIGNS; i++) sign();
  const signMicros = Number(process.hrtime.bigint() - signStarted) / 1e3 / SIGNS;

  // headers signed ahead of each run, enough for the rate seen so far with a margin
  let signedAhead = [];
  let next = 0;
  let signedLive = 0;
  const signAhead = (count) => {
    signedAhead = Array.from({ length: count }, sign);
    next = 0;
  };
  const targets = [
    {
      label: `GET ${path}, Authorization: OAuth (HMAC-SHA1, a nonce each)`,
      signed: true,
      headers: {},
      extra: {
        requests: [
          {
            method: "GET",
            path,
            setupRequest(req) {
              if (next < signedAhead.length) req.headers.authorization = signedAhead[next++];
              else {
                req.headers.authorization = sign();
                signedLive++;
              }
              return req;
            },
          },
        ],
      },
    },
    { label: `GET ${path}, Authorization: Bearer`, headers: { authorization: `Bearer ${token}` }, extra: {} },
  ];
  for (const t of targets) Object.assign(t, { requests: 0, seconds: 0, rounds: [], cpu: 0 });
  progress(
    `OAuth vs Bearer: ${ROUNDS} rounds x 2 targets x (${WARMUP_SECONDS} s warm-up + ${SECONDS} s), ${CONNECTIONS} connections`,
  );
  let rate = 2000;
  const pid = server.child.pid;
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      if (t.signed) signAhead(Math.ceil(rate * WARMUP_SECONDS * 1.5) + 100);
      const warm = await cannon(url, t.headers, WARMUP_SECONDS, t.extra);
      rate = Math.max(rate, warm.requests.total / warm.duration);
      if (t.signed) signAhead(Math.ceil(rate * SECONDS * 1.5) + 100);
      const cpuBefore = cpuSeconds(pid);
      const result = await cannon(url, t.headers, SECONDS, t.extra);
      t.cpu += cpuSeconds(pid) - cpuBefore;
      t.requests += result.requests.total;
      t.seconds += result.duration;
      t.rounds.push(result);
    }
  }

  console.log(
    `\n6. OAuth-signed vs Bearer throughput: autocannon, ${CONNECTIONS} connections, ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up, ` +
      `${ROUNDS} rounds per target alternated,\n   on the bizctl server of section 2 (info-level request log to a file)`,
  );
  const rps = (t) => t.requests / t.seconds;
  const cpuPer = (t) => (t.cpu * 1e6) / t.requests;
  const [signed, bearer] = targets;
  const rows = targets.map((t) => [
    t.label,
    `${Math.round(rps(t))} req/s`,
    ratio(rps(t) / rps(bearer)),
    `${(1000 / rps(t) - 1000 / rps(bearer)).toFixed(3)} ms`,
    t.rounds.map((r) => Math.round(r.requests.total / r.duration)).join(" / "),
    `${median(t.rounds.map((r) => r.latency.p50))} / ${median(t.rounds.map((r) => r.latency.p99))} ms`,
    Number.isNaN(t.cpu) ? "?" : `${Math.round(cpuPer(t))} µs (${ratio(cpuPer(bearer) / cpuPer(t))})`,
  ]);
  console.log(
    table(
      ["target", "throughput", "vs Bearer", "extra/request", "per round", "p50 / p99", "server CPU/request"],
      rows,
      [1, 2, 3, 6],
    ),
  );
  const value = rps(signed) / rps(bearer);
  console.log(
    `  ratio OAuth / Bearer: ${ratio(value)}  ${verdict("OAuth-signed vs Bearer throughput", value, ">=", 0.8)}`,
  );
  console.log(
    `  (the headers are signed before each run, ${signMicros.toFixed(1)} µs each with the oauth-1.0a package, so that the load\n` +
      `  generator on the same two cores does not sign during it${signedLive ? `; ${signedLive} were signed live, the prepared ones having run out` : ""};\n` +
      "  a signed request reads its token with its session, user and consumer in one query, checks the HMAC and\n" +
      "  inserts its nonce, concurrent requests sharing one commit; server CPU/request: the server process's user +\n" +
      "  system time (/proc) over the requests it answered, in brackets Bearer's over this one's)",
  );
}
