// The audit measure of `npm run bench` (bench/measures/audit.mjs starts it as
// `node --import tsx bench/audit.mts WORK_DIR`): what auditing costs the writes it records.
//
// The TypeScript sources are loaded through lib/audit-switch.mjs, which gives the audit module a
// switch for this process only (the product has none): off, audit() returns at once and writes no
// record. Two apps are built in this process, each on a data dir of its own: one audited, one
// whose requests all run with the switch off, from its set-up on. Each measure is the median wall
// time of app.inject() (the whole Fastify pipeline, no socket) of sequential requests, the two apps
// alternating A B B A so that drift weighs on both alike, the switch set before each request:
//   - a User update: PUT /Resources/{id} changing a title (one resource row, its indexed values, and
//     with auditing one audit row, in one transaction);
//   - a login: POST /auth/login (bcrypt, the credential, the session, and one audit row).
// It prints progress on stderr and one JSON object on stdout.
//
// Knobs: BENCH_AUDIT_UPDATES (300) measured updates per app, BENCH_AUDIT_LOGINS (40) logins per app.
import { register } from "node:module";
import { join } from "node:path";
import type { InjectOptions } from "fastify";

// before any source is loaded: the hooks see the audit module only if it loads after them
register("./lib/audit-switch.mjs", import.meta.url);
const { buildApp } = await import("../src/server/app.js");
const { createFirstAdmin } = await import("../src/server/services/first-admin.js");
const { setAuditRecording } = (await import("../src/server/services/audit.js")) as unknown as {
  setAuditRecording(on: boolean): void;
};

function knob(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}
const UPDATES = knob("BENCH_AUDIT_UPDATES", 300);
const LOGINS = knob("BENCH_AUDIT_LOGINS", 40);
const WARMUP = 20;
const PASSWORD = "correct horse battery staple 42";

const workDir = process.argv[2];
if (!workDir) throw new Error("usage: node --import tsx bench/audit.mts WORK_DIR");
const progress = (message: string) => process.stderr.write(`… ${message}\n`);

async function prepared(name: string, audited: boolean) {
  setAuditRecording(audited);
  const app = await buildApp({
    dataDir: join(workDir, name),
    log: false,
    loginRateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
  });
  await createFirstAdmin(app.services, { userName: "admin", password: PASSWORD, temporary: false });
  const login = await app.inject({
    method: "POST",
    url: "/auth/login",
    payload: { userName: "admin", password: PASSWORD },
  });
  if (login.statusCode !== 200) throw new Error(`login answered ${login.statusCode}: ${login.body}`);
  const authorization = `Bearer ${(login.json() as { token: string }).token}`;
  const created = await app.inject({
    method: "POST",
    url: "/Resources",
    headers: { authorization },
    payload: { resourceType: "User", userName: "jdoe", emails: [{ value: "jdoe@example.com" }] },
  });
  if (created.statusCode !== 201) throw new Error(`create answered ${created.statusCode}: ${created.body}`);
  const user = created.json() as Record<string, unknown> & { id: string };
  return { app, audited, authorization, user, updates: [] as number[], logins: [] as number[], n: 0 };
}

type Prepared = Awaited<ReturnType<typeof prepared>>;

async function timed(p: Prepared, request: InjectOptions, expected: number): Promise<number> {
  const { app } = p;
  setAuditRecording(p.audited);
  const started = process.hrtime.bigint();
  const response = await app.inject(request);
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  if (response.statusCode !== expected) throw new Error(`answered ${response.statusCode}: ${response.body}`);
  return elapsed;
}

function update(p: Prepared) {
  p.n += 1;
  const { meta: _meta, id, ...attributes } = p.user;
  return timed(
    p,
    {
      method: "PUT",
      url: `/Resources/${id}`,
      headers: { authorization: p.authorization },
      payload: { ...attributes, title: `title ${p.n}` },
    },
    200,
  );
}

const login = (p: Prepared) =>
  timed(p, { method: "POST", url: "/auth/login", payload: { userName: "admin", password: PASSWORD } }, 200);

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const audited = await prepared("audited", true);
const unaudited = await prepared("unaudited", false);
try {
  progress(`audit: ${WARMUP} warm-up + ${UPDATES} user updates per app, interleaved A B B A`);
  for (let i = 0; i < WARMUP + UPDATES; i++) {
    for (const p of i % 2 === 0 ? [audited, unaudited] : [unaudited, audited]) {
      const elapsed = await update(p);
      if (i >= WARMUP) p.updates.push(elapsed);
    }
  }
  progress(`audit: ${LOGINS} logins per app, interleaved`);
  for (let i = 0; i < LOGINS + 2; i++) {
    for (const p of i % 2 === 0 ? [audited, unaudited] : [unaudited, audited]) {
      const elapsed = await login(p);
      if (i >= 2) p.logins.push(elapsed);
    }
  }
  const records = await audited.app.services.store.db
    .selectFrom("audit_log")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  const none = await unaudited.app.services.store.db
    .selectFrom("audit_log")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  process.stdout.write(
    `${JSON.stringify({
      updates: { audited: median(audited.updates), unaudited: median(unaudited.updates), count: UPDATES },
      logins: { audited: median(audited.logins), unaudited: median(unaudited.logins), count: LOGINS },
      records: { audited: Number(records.n), unaudited: Number(none.n) },
    })}\n`,
  );
} finally {
  await audited.app.close();
  await unaudited.app.close();
}
