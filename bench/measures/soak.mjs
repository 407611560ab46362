// Soak (issue 11, `npm run soak`): a realistic mix against one `server start` for a minute at 50
// connections, on SQLite or on PostgreSQL. Bars: no error at all, and the server's resident set
// grows by at most 20% from the end of the warm-up to the end of the soak. p99 latency is reported.
//
// The mix, per connection, is a cycle of 100 requests: a login first, then 70 reads (an event by
// code, a user by id), 20 filtered lists (events by type, events after a date newest first, users
// by name prefix) and 8 writes (event creates and full replacements) spread through it, and a
// logout last; the login and the logout are the other two of the 10% writes. Each cycle uses the
// token its login returned, so sessions are made and ended all the time.
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import { knob, PASSWORD } from "../lib/config.mjs";
import { initAndStart } from "../lib/fresh-server.mjs";
import { stop } from "../lib/processes.mjs";
import { progress, table, thousands, verdict } from "../lib/report.mjs";

export const SOAK_SECONDS = knob("SOAK_SECONDS", 60);
export const SOAK_WARMUP_SECONDS = knob("SOAK_WARMUP_SECONDS", 10);
export const SOAK_CONNECTIONS = knob("SOAK_CONNECTIONS", 50);
const SEEDED_EVENTS = 200;
const SEEDED_USERS = 50;
const TYPES = ["webinar", "meeting", "conference", "workshop"];
/** the bar on the resident set: end of soak / end of warm-up */
const RSS_GROWTH_BAR = 1.2;

const pick = (list) => list[Math.floor(Math.random() * list.length)];

/** The server's resident set in bytes, from /proc (Linux). */
function rssOf(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function call(url, method, path, token, body) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body && { "content-type": "application/json" }) },
    ...(body && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

async function loginToken(url) {
  const response = await fetch(`${url}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ userName: "admin", password: PASSWORD }),
  });
  if (response.status !== 200) throw new Error(`login answered ${response.status}: ${await response.text()}`);
  return (await response.json()).token;
}

const eventBody = (code, i) => ({
  code,
  name: `Soak event ${i}`,
  type: TYPES[i % TYPES.length],
  startsAt: new Date(Date.UTC(2027, 0, 1) + i * 3_600_000).toISOString(),
  location: `Room ${i % 17}`,
  tags: ["soak", TYPES[i % TYPES.length]],
});

/** Events and users to read, list and change, written through the API. */
async function seed(url, token) {
  const codes = Array.from({ length: SEEDED_EVENTS }, (_, i) => `SOAK-${i}`);
  const userIds = [];
  for (let i = 0; i < codes.length; i += 10) {
    await Promise.all(
      codes.slice(i, i + 10).map((code, j) => call(url, "POST", "/api/crm/v1/events", token, eventBody(code, i + j))),
    );
  }
  for (let i = 0; i < SEEDED_USERS; i += 10) {
    const created = await Promise.all(
      Array.from({ length: Math.min(10, SEEDED_USERS - i) }, (_, j) =>
        call(url, "POST", "/Resources", token, {
          resourceType: "User",
          userName: `soak.user${i + j}`,
          displayName: `Soak User ${i + j}`,
          title: "Clerk",
        }),
      ),
    );
    userIds.push(...created.map((user) => user.id));
  }
  return { codes, userIds };
}

/** The 100 requests of one connection's cycle (see the header). */
function cycle({ codes, userIds }) {
  const authorised = (context) => ({ authorization: `Bearer ${context.token}` });
  const read = (i) =>
    i % 5 === 4
      ? {
          setupRequest: (req, context) => ({
            ...req,
            path: `/Resources/${pick(userIds)}`,
            headers: authorised(context),
          }),
        }
      : {
          setupRequest: (req, context) => ({
            ...req,
            path: `/api/crm/v1/events/${pick(codes)}`,
            headers: authorised(context),
          }),
        };
  const lists = [
    () => `/api/crm/v1/events?filter=${encodeURIComponent(`type eq "${pick(TYPES)}"`)}&pagesize=20`,
    () =>
      `/api/crm/v1/events?filter=${encodeURIComponent(`startsAt gt "2027-01-0${1 + Math.floor(Math.random() * 8)}T00:00:00Z"`)}&order=-startsAt&pagesize=20`,
    () => `/Resources?filter=${encodeURIComponent(`userName sw "soak.user${Math.floor(Math.random() * 5)}"`)}&count=20`,
  ];
  const list = (i) => ({
    setupRequest: (req, context) => ({ ...req, path: lists[i % lists.length](), headers: authorised(context) }),
  });
  const write = (i) => ({
    setupRequest: (req, context) => {
      const n = Math.floor(Math.random() * 1e9);
      const create = i % 2 === 0;
      const code = create ? `SOAK-NEW-${Date.now().toString(36)}-${n.toString(36)}` : pick(codes);
      return {
        ...req,
        method: create ? "POST" : "PUT",
        path: create ? "/api/crm/v1/events" : `/api/crm/v1/events/${code}`,
        headers: { ...authorised(context), "content-type": "application/json" },
        body: JSON.stringify(eventBody(code, n % 1000)),
      };
    },
  });
  const middle = [];
  let reads = 0;
  let lists_ = 0;
  let writes = 0;
  // spread evenly: a list every 5th, a write every 12th, reads in between
  for (let i = 0; i < 98; i++) {
    if (i % 12 === 11 && writes < 8) middle.push(write(writes++));
    else if (i % 5 === 2 && lists_ < 20) middle.push(list(lists_++));
    else if (reads < 70) middle.push(read(reads++));
    else if (lists_ < 20) middle.push(list(lists_++));
    else middle.push(write(writes++));
  }
  return [
    {
      method: "POST",
      path: "/auth/login",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ userName: "admin", password: PASSWORD }),
      onResponse: (status, body, context) => {
        if (status === 200) context.token = JSON.parse(body).token;
      },
    },
    ...middle,
    {
      method: "POST",
      path: "/auth/logout",
      setupRequest: (req, context) => ({ ...req, headers: authorised(context) }),
    },
  ];
}

/** A fresh server on `backend` ("sqlite" or a postgres:// URL of an empty database). */
const startServer = (base, dir, name, databaseUrl) =>
  initAndStart(base, dir, name, { databaseUrl, args: ["--login-rate-limit", "1000000"] });

/** One soak on one backend; returns the row of the report. */
export async function measureSoak(base, dir, name, databaseUrl) {
  progress(`soak (${name}): server init, server start, ${SEEDED_EVENTS} events and ${SEEDED_USERS} users`);
  const server = await startServer(base, dir, `soak-${name}`, databaseUrl);
  try {
    const token = await loginToken(server.url);
    const seeded = await seed(server.url, token);
    const requests = cycle(seeded);
    const options = { url: server.url, connections: SOAK_CONNECTIONS, requests, timeout: 30 };
    const rssBefore = rssOf(server.child.pid);
    progress(`soak (${name}): ${SOAK_WARMUP_SECONDS} s warm-up, ${SOAK_CONNECTIONS} connections`);
    const warmup = await autocannon({ ...options, duration: SOAK_WARMUP_SECONDS });
    const rssStart = rssOf(server.child.pid);
    progress(`soak (${name}): ${SOAK_SECONDS} s, ${SOAK_CONNECTIONS} connections`);
    let rssMax = rssStart;
    const sampler = setInterval(() => {
      rssMax = Math.max(rssMax, rssOf(server.child.pid));
    }, 1000);
    let result;
    try {
      result = await autocannon({ ...options, duration: SOAK_SECONDS });
    } finally {
      clearInterval(sampler);
    }
    const rssEnd = rssOf(server.child.pid);
    rssMax = Math.max(rssMax, rssEnd);
    const failed = [warmup, result].reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0);
    const statuses = Object.entries(result.statusCodeStats ?? {})
      .map(([code, { count }]) => `${thousands(count)} x ${code}`)
      .join(", ");
    return { name, result, failed, statuses, rssBefore, rssStart, rssEnd, rssMax };
  } finally {
    await stop(server.child);
  }
}

export function reportSoak(rows) {
  console.log(
    `\nSoak: autocannon, ${SOAK_CONNECTIONS} connections, ${SOAK_SECONDS} s after a ${SOAK_WARMUP_SECONDS} s warm-up; per connection ` +
      "a cycle of login, 70 reads, 20 filtered lists, 8 event writes, logout",
  );
  console.log(
    table(
      ["backend", "requests", "req/s", "errors", "p50 / p99", "RSS before / after warm-up / end / max", "statuses"],
      rows.map((r) => [
        r.name,
        thousands(r.result.requests.total),
        Math.round(r.result.requests.total / r.result.duration),
        r.failed,
        `${r.result.latency.p50} / ${r.result.latency.p99} ms`,
        [r.rssBefore, r.rssStart, r.rssEnd, r.rssMax].map(mb).join(" / "),
        r.statuses,
      ]),
      [1, 2, 3],
    ),
  );
  for (const r of rows) {
    const total = r.result.requests.total;
    const share = r.failed / Math.max(total, 1);
    const name = `soak ${r.name}: errors (${r.failed} of ${thousands(total)})`;
    console.log(`  ${r.name}: errors ${r.failed} of ${thousands(total)}  ${verdict(name, share, "<=", 0)}`);
    const growth = r.rssEnd / r.rssStart;
    console.log(
      `  ${r.name}: RSS end / after warm-up ${growth.toFixed(2)}x  ${verdict(`soak ${r.name}: RSS growth`, growth, "<=", RSS_GROWTH_BAR)}`,
    );
  }
}
