// 14. Login with a second factor: POST /auth/login with a TOTP code against the same login of a
// user without a factor (what the code costs: a read, an unseal, an HMAC and the replay guard),
// and the timing rule of spec 1.1 for the new refusal: a right password with a wrong code against
// a wrong password (medians within 10%, as section 5's pairs). Over one keep-alive connection to
// a `server start` of its own, pairs interleaved A B B A. A code is good once, so each timed
// login with a code is a user of its own, enrolled beforehand; so is each failure, so that none
// counts toward a back-off.
import { Client } from "undici";
import { knob, PASSWORD } from "../lib/config.mjs";
import { initAndStart } from "../lib/fresh-server.mjs";
import { interleave, WITHIN } from "../lib/interleave.mjs";
import { stop } from "../lib/processes.mjs";
import { info, median, ms2, progress, quantile, ratio, table, verdict } from "../lib/report.mjs";
import { totpCode } from "../lib/totp.mjs";

const json = (method, path, body, token) => ({
  method,
  path,
  headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) },
  ...(body !== undefined && { body: JSON.stringify(body) }),
});

async function call(client, request, status) {
  const response = await client.request(request);
  const text = await response.body.text();
  if (response.statusCode !== status)
    throw new Error(`${request.method} ${request.path}: ${response.statusCode} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** `count` users named `prefix-N` with the bench password, made in one /Bulk request by the admin. */
async function createUsers(client, adminToken, prefix, count) {
  const { hash } = (await import("argon2")).default;
  const passwordHash = await hash(PASSWORD, { type: 2 });
  const Operations = Array.from({ length: count }, (_, i) => ({
    method: "POST",
    path: "/Users",
    bulkId: `u${i}`,
    data: { userName: `${prefix}-${i}`, passwordHash },
  }));
  const answer = await call(
    client,
    json("POST", "/Bulk", { schemas: ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"], Operations }, adminToken),
    200,
  );
  if (answer.Operations.some((o) => o.status !== "201")) throw new Error(`a user of ${prefix} was not created`);
  return Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
}

/** Logs each user in, enrolls a factor and turns it on with its first code; their seeds. */
async function enroll(client, userNames) {
  const seeds = new Map();
  for (const userName of userNames) {
    const { token } = await call(client, json("POST", "/auth/login", { userName, password: PASSWORD }), 200);
    const { secret } = await call(client, json("POST", "/auth/mfa/totp", undefined, token), 200);
    await call(client, json("POST", "/auth/mfa/totp/verify", { code: totpCode(secret) }, token), 200);
    seeds.set(userName, secret);
  }
  return seeds;
}

function print(title, cases, after, { bar }) {
  const [a, b] = cases;
  const rows = cases.flatMap((c) => [
    [c.label, ms2(median(c.times)), ms2(quantile(c.times, 0.9))],
    [`  the request right after ${c.short}`, ms2(median(after[c.key])), ms2(quantile(after[c.key], 0.9))],
  ]);
  console.log(table(["request", "median", "p90"], rows, [1, 2]));
  const own = median(a.times) / median(b.times);
  const name = `${title}: median ${a.short} / ${b.short}`;
  console.log(`  ${name}: ${ratio(own)}  ${bar ? verdict(name, own, "within", WITHIN) : info(name, own)}`);
}

export async function measureLoginSecondFactor({ base }, dir) {
  const rounds = knob("BENCH_LOGIN_REQUESTS", 60);
  const warmups = 5;
  const users = warmups + rounds;
  const server = await initAndStart(base, dir, "login-mfa", { args: ["--login-rate-limit", "100000"] });
  const client = new Client(server.url, { pipelining: 1 });
  try {
    const admin = await call(client, json("POST", "/auth/login", { userName: "admin", password: PASSWORD }), 200);
    progress(`login with a second factor: ${2 * users} users enrolled, ${users} without a factor`);
    const withCode = await enroll(client, await createUsers(client, admin.token, "coded", users));
    const wrongCode = await enroll(client, await createUsers(client, admin.token, "miscoded", users));
    const plain = await createUsers(client, admin.token, "plain", users);
    // a first login rehashes an imported hash under the server's parameters, as enrolling did for the others
    for (const userName of plain)
      await call(client, json("POST", "/auth/login", { userName, password: PASSWORD }), 200);
    const names = (map) => [...map.keys()];
    // the step after the one the first code spent: accepted as one step of drift, or as the current one
    const code = (seeds, i) => totpCode(seeds.get(names(seeds)[i]), Date.now() + 30_000);
    const cases = (list) => list.map((c) => ({ ...c, times: [], bodies: new Set() }));
    const success = cases([
      {
        key: "code",
        short: "with a code",
        label: "a user with a factor, password and code (200)",
        status: 200,
        request: (i) =>
          json("POST", "/auth/login", { userName: names(withCode)[i], password: PASSWORD, otp: code(withCode, i) }),
      },
      {
        key: "plain",
        short: "without",
        label: "a user without one, password (200)",
        status: 200,
        request: (i) => json("POST", "/auth/login", { userName: plain[i], password: PASSWORD }),
      },
    ]);
    const refusal = cases([
      {
        key: "wrong-code",
        short: "wrong code",
        label: "right password, wrong code (401 invalid_otp)",
        status: 401,
        request: (i) =>
          json("POST", "/auth/login", { userName: names(wrongCode)[i], password: PASSWORD, otp: "000000" }),
      },
      {
        key: "wrong-password",
        short: "wrong password",
        label: "wrong password (401 invalid_credentials)",
        status: 401,
        request: (i) => json("POST", "/auth/login", { userName: plain[i], password: "a wrong password 1234" }),
      },
    ]);
    progress(`login with a code against without: ${warmups} + ${rounds} pairs`);
    const successAfter = await interleave(client, success, { rounds, warmups });
    progress(`a wrong code against a wrong password: ${warmups} + ${rounds} pairs`);
    const refusalAfter = await interleave(client, refusal, { rounds, warmups });
    console.log(
      `\n14. Login with a second factor over HTTP (undici, one keep-alive connection) to \`server start\`;\n` +
        `   each pair interleaved A B B A after ${warmups} warm-up pairs, ${rounds} each`,
    );
    print("login", success, successAfter, { bar: false });
    print("login refused", refusal, refusalAfter, { bar: true });
  } finally {
    await client.close();
    await stop(server.child);
  }
}
