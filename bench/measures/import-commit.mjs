// 13. Other users' writes while an admin commits an atomic import of BENCH_COMMIT_EVENTS (100 000)
// events, on SQLite and on PostgreSQL (`server start` on a data dir, or a database, of its own):
// a member logs in and creates an event, again and again, first on the idle server, then for as
// long as the commit runs; each request is timed. Bars: the slowest login and the slowest create
// made during the commit answer within 1 s (shown as a ratio of 1 s). The medians during the
// commit against the idle ones are informational.
import { setTimeout as sleep } from "node:timers/promises";
import { knob, PASSWORD } from "../lib/config.mjs";
import { initAndStart } from "../lib/fresh-server.mjs";
import { createDatabase } from "../lib/postgres.mjs";
import { stop } from "../lib/processes.mjs";
import { info, median, ms, progress, table, thousands, verdict } from "../lib/report.mjs";

const EVENTS = knob("BENCH_COMMIT_EVENTS", 100_000);
const IDLE_ROUNDS = knob("BENCH_COMMIT_IDLE_ROUNDS", 30);
const BATCH = 1000;
const MEMBER = { userName: "mia", password: "amber lantern orbit 3391 prairie" };
const BAR_MS = 1000;

async function call(url, method, path, { token, body } = {}) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(token && { authorization: `Bearer ${token}` }),
      ...(body !== undefined && { "content-type": "application/json" }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: () => JSON.parse(text), text };
}

async function expectStatus(promise, status, what) {
  const response = await promise;
  if (response.status !== status)
    throw new Error(`${what} answered ${response.status}: ${response.text.slice(0, 300)}`);
  return response;
}

const login = async (url, user) =>
  (await expectStatus(call(url, "POST", "/auth/login", { body: user }), 200, `login of ${user.userName}`)).json().token;

/** A member with a password of its own (the admin's temporary one, changed). */
async function addMember(url, adminToken) {
  const temporary = "ochre violin summit 4478 tundra";
  const user = { resourceType: "User", userName: MEMBER.userName, password: temporary };
  await expectStatus(call(url, "POST", "/Resources", { token: adminToken, body: user }), 201, "member create");
  const token = await login(url, { userName: MEMBER.userName, password: temporary });
  const change = { lastPassword: temporary, newPassword: MEMBER.password };
  await expectStatus(call(url, "POST", "/auth/ChangePassWithLastPass", { token, body: change }), 204, "change");
}

/** An atomic import holding EVENTS events, staged in batches; its id. */
async function stagedImport(url, token) {
  const opened = await expectStatus(
    call(url, "POST", "/api/crm/v1/events/imports", { token, body: {} }),
    201,
    "import start",
  );
  const id = opened.json().id;
  const start = Date.parse("2027-01-01T00:00:00Z");
  for (let first = 0; first < EVENTS; first += BATCH) {
    const items = [];
    for (let i = first; i < Math.min(EVENTS, first + BATCH); i++) {
      items.push({
        code: `IMP-${String(i).padStart(7, "0")}`,
        name: `Imported event ${i}`,
        type: ["webinar", "meeting", "conference"][i % 3],
        startsAt: new Date(start + i * 60_000).toISOString(),
        location: `Room ${i % 50}`,
        tags: ["bulk"],
      });
    }
    await expectStatus(
      call(url, "POST", "/api/crm/v1/events/batch", { token, body: { import: id, items } }),
      200,
      "stage",
    );
  }
  return id;
}

/** One login and one create by the member, each timed (ms). */
async function oneRound(url, round, times) {
  let started = performance.now();
  const token = await login(url, MEMBER);
  times.login.push(performance.now() - started);
  const event = {
    code: `M-${round}-${crypto.randomUUID().slice(0, 8)}`,
    name: "Member's",
    startsAt: "2027-06-01T10:00:00Z",
  };
  started = performance.now();
  await expectStatus(call(url, "POST", "/api/crm/v1/events/", { token, body: event }), 201, "member create");
  times.create.push(performance.now() - started);
}

async function measureOn(base, dir, store) {
  const databaseUrl = store === "PostgreSQL" ? await createDatabase("commit") : undefined;
  // the member logs in far more often than a person would
  const server = await initAndStart(base, dir, `commit-${store.toLowerCase()}`, {
    databaseUrl,
    args: ["--login-rate-limit", "1000000"],
  });
  try {
    const adminToken = await login(server.url, { userName: "admin", password: PASSWORD });
    await addMember(server.url, adminToken);
    progress(`import commit (${store}): staging ${thousands(EVENTS)} events`);
    const id = await stagedImport(server.url, adminToken);
    const idle = { login: [], create: [] };
    for (let round = 0; round < IDLE_ROUNDS; round++) await oneRound(server.url, `idle${round}`, idle);
    progress(`import commit (${store}): committing, while the member logs in and creates`);
    const during = { login: [], create: [] };
    let done = false;
    const commitStarted = performance.now();
    const commit = expectStatus(
      call(server.url, "POST", `/api/crm/v1/events/imports/${id}/commit`, { token: adminToken, body: {} }),
      200,
      "commit",
    ).finally(() => {
      done = true;
    });
    // the commit's request is on its way before the first round
    await sleep(50);
    for (let round = 0; !done; round++) await oneRound(server.url, `during${round}`, during);
    const answer = (await commit).json();
    const commitMs = performance.now() - commitStarted;
    if (!answer.committed || answer.created !== EVENTS)
      throw new Error(`commit: ${JSON.stringify(answer).slice(0, 300)}`);
    return { store, idle, during, commitMs };
  } finally {
    await stop(server.child);
  }
}

export async function measureImportCommit(setup, workDir) {
  console.log(
    `\n13. Other users' logins and creates while an admin commits an atomic import of ${thousands(EVENTS)} events`,
  );
  const results = [];
  for (const store of ["SQLite", "PostgreSQL"]) results.push(await measureOn(setup.base, workDir, store));
  const rows = [];
  for (const r of results) {
    for (const kind of ["login", "create"]) {
      rows.push([
        `${r.store}: ${kind}`,
        ms(median(r.idle[kind])),
        ms(median(r.during[kind])),
        ms(Math.max(...r.during[kind])),
        String(r.during[kind].length),
      ]);
    }
    rows.push([`${r.store}: the commit itself`, "", "", ms(r.commitMs), ""]);
  }
  console.log(table(["request", "idle median", "during median", "during max", "during n"], rows, [1, 2, 3, 4]));
  for (const r of results) {
    for (const kind of ["login", "create"]) {
      const slowest = Math.max(...r.during[kind]);
      console.log(
        `  ${r.store} ${kind} during the commit, slowest / 1 s: ${(slowest / BAR_MS).toFixed(2)}x  ${verdict(`import commit ${r.store}: slowest ${kind} / 1 s`, slowest / BAR_MS, "<=", 1)}`,
      );
      const slowdown = median(r.during[kind]) / median(r.idle[kind]);
      console.log(
        `  ${r.store} ${kind} median during / idle: ${slowdown.toFixed(2)}x  ${info(`import commit ${r.store}: ${kind} median during / idle`, slowdown)}`,
      );
    }
  }
}
