// 5. Enumeration by timing: POST /renewPassword for an existing and an unknown user, POST
// /auth/login for an unknown user and a wrong password, and for a locked account and a locked name
// that holds no account (the back-off by name), each pair interleaved over one keep-alive
// HTTP connection to a `server start` that sends its mail to a real SMTP server (smtp-server on
// loopback). Each kind is timed, and so is the request right after it: the work a known account
// causes must not slow the request that follows either. Bars: the medians within 10%.
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "undici";
import { BIN, knob, LISTENING, PASSWORD } from "../lib/config.mjs";
import { interleave, report, WITHIN } from "../lib/interleave.mjs";
import { run, startBackground, stop } from "../lib/processes.mjs";
import { progress } from "../lib/report.mjs";
import { smtpSink } from "../lib/smtp-sink.mjs";

const post = (path, body) => ({
  method: "POST",
  path,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

export async function measureRenewPassword({ base }, dir) {
  const requests = knob("BENCH_RENEW_REQUESTS", 200);
  const logins = knob("BENCH_LOGIN_REQUESTS", 60);
  const warmups = 10;
  progress("enumeration timing: a user with an e-mail, an SMTP sink, a server with --login-rate-limit 100000");
  // a data dir of its own: the fixture's server would otherwise take a share of the reset jobs
  // (its sender loop works the same queue) and write their mail to its outbox
  const dataDir = join(dir, "renew-data");
  const env = { ...base, BIZCTL_CONFIG_DIR: join(dir, "config-renew"), BIZCTL_DATA_DIR: dataDir };
  await run([BIN, "server", "init", "--password-stdin"], { env, input: `${PASSWORD}\n` });
  await run([BIN, "auth", "login", "--user", "admin", "--password-stdin"], { env, input: `${PASSWORD}\n` });
  await run([BIN, "users", "create", "--user-name", "jdoe", "--email", "jdoe@example.com"], { env });
  await run([BIN, "users", "create", "--user-name", "locky", "--password-stdin"], { env, input: `${PASSWORD}\n` });
  const smtp = await smtpSink();
  const server = await startBackground(
    "bizctl server (--login-rate-limit 100000, --smtp-url)",
    [
      BIN,
      "server",
      "start",
      "--port",
      "0",
      "--data-dir",
      dataDir,
      "--login-rate-limit",
      "100000",
      "--smtp-url",
      smtp.url,
    ],
    { env, pattern: LISTENING, logFile: join(dir, "renew.log") },
  );
  // one keep-alive connection, as a careful attacker would use: no connection set-up in the times
  const client = new Client(server.url, { pipelining: 1 });
  const renew = [
    {
      key: "existing",
      short: "existing",
      label: 'existing user  {"userName":"jdoe"}',
      status: 202,
      request: post("/renewPassword", { userName: "jdoe" }),
    },
    {
      key: "missing",
      short: "unknown",
      label: 'unknown user   {"userName":"nobody-9f3c"}',
      status: 202,
      request: post("/renewPassword", { userName: "nobody-9f3c" }),
    },
  ].map((c) => ({ ...c, times: [], bodies: new Set() }));
  const login = [
    {
      key: "unknown",
      short: "unknown user",
      label: "unknown user, any password",
      status: 401,
      // a new name each time: a name fails five times at most before it backs off, as an account does
      request: (i) => post("/auth/login", { userName: `nobody-9f3c-${i}`, password: "a wrong password 1234" }),
    },
    {
      key: "wrong",
      short: "wrong password",
      label: "existing user, wrong password",
      status: 401,
      request: post("/auth/login", { userName: "admin", password: "a wrong password 1234" }),
    },
  ].map((c) => ({ ...c, times: [], bodies: new Set() }));
  const locked = [
    {
      key: "locked-account",
      short: "locked account",
      label: "locked account (429)",
      status: 429,
      request: post("/auth/login", { userName: "locky", password: "a wrong password 1234" }),
    },
    {
      key: "locked-name",
      short: "locked unknown name",
      label: "locked name without an account (429)",
      status: 429,
      request: post("/auth/login", { userName: "nobody-locked", password: "a wrong password 1234" }),
    },
  ].map((c) => ({ ...c, times: [], bodies: new Set() }));
  let renewAfter;
  let loginAfter;
  let lockedAfter;
  let mailsSent;
  try {
    progress(`renewPassword: ${warmups} + ${requests} pairs, interleaved A B B A`);
    renewAfter = await interleave(client, renew, { rounds: requests, warmups });
    progress(`login: ${warmups} + ${logins} pairs, interleaved A B B A`);
    // 5 failures lock an account: a correct login (not timed) clears the count every 4th pair
    const clearFailures = async (i) => {
      if (i % 4 !== 3) return false;
      const response = await client.request(post("/auth/login", { userName: "admin", password: PASSWORD }));
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`the correct login answered ${response.statusCode}`);
      return true;
    };
    loginAfter = await interleave(client, login, { rounds: logins, warmups, between: clearFailures });
    // nine failures each: backed off for 4 minutes, longer than the measure takes
    for (const userName of ["locky", "nobody-locked"]) {
      for (let i = 0; i < 9; i++) {
        const response = await client.request(post("/auth/login", { userName, password: "a wrong password 1234" }));
        await response.body.text();
      }
    }
    progress(`locked login: ${warmups} + ${logins} pairs, interleaved A B B A`);
    lockedAfter = await interleave(client, locked, { rounds: logins, warmups });
    // each reset mail is due within a second of its request; the sender sends one at a time, so
    // a burst takes a while: wait for them (at most 60 s) to show that the work was done
    const expected = warmups + requests;
    for (let waited = 0; smtp.received() < expected && waited < 60_000; waited += 100) await sleep(100);
    mailsSent = `${smtp.received()} of ${expected}`;
  } finally {
    await client.close();
    await stop(server.child);
    await smtp.close();
  }

  console.log(
    `\n5. Enumeration by timing over HTTP (undici, one keep-alive connection) to \`server start --login-rate-limit 100000\`\n` +
      `   with a real SMTP server; each pair interleaved A B B A after ${warmups} warm-up pairs; bars: medians within ${WITHIN * 100}%`,
  );
  console.log(`\n  POST /renewPassword, ${requests} each`);
  report("renewPassword", renew, renewAfter);
  console.log(`  reset e-mails received by the SMTP server for jdoe: ${mailsSent}`);
  console.log(`\n  POST /auth/login, ${logins} each`);
  report("login", login, loginAfter);
  console.log(`\n  POST /auth/login to a backed-off name, ${logins} each`);
  report("locked login", locked, lockedAfter);
}
