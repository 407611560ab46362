/**
 * The mail queue: messages kept in the database, sent by a loop in every instance through a real
 * SMTP server (`smtp-server` on loopback), on a SQLite file and on PostgreSQL alike. SMTP down
 * then up, a restart in between, two instances on one database, leases, giving up, retention.
 */
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type BuiltApp, buildApp } from "../../src/server/app.js";
import { MAIL_SENDERS } from "../../src/server/mail/sender-loop.js";
import { MAIL_DEFAULTS } from "../../src/server/mail/types.js";
import type { ServerOptions } from "../../src/server/options.js";
import { createFirstAdmin } from "../../src/server/services/first-admin.js";
import { claimMail, insertMail } from "../../src/server/store/mail-queue-repo.js";
import { closedPort } from "../helpers/cli.js";
import { type ParsedMail, recipientsOf, resetLinkOf, type SmtpSink, startSmtpSink } from "../helpers/mail.js";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";
import { ADMIN_PASSWORD, makeDataDir } from "../helpers/server.js";

const NEW_PASSWORD = "purple elephants dance at midnight 7";
const EMAIL = "ada@example.com";

interface Backend {
  name: string;
  /** a database several apps may share: a SQLite file path or a PostgreSQL URL (undefined: the data dir's own file) */
  open(): Promise<{ url: string | undefined; drop(): Promise<void> }>;
}

const BACKENDS: Backend[] = [
  { name: "SQLite file", open: async () => ({ url: undefined, drop: async () => {} }) },
  { name: "PostgreSQL", open: createTestDatabase },
];

/** Everything a test opened, closed after it whatever happened. */
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function sharedDatabase(backend: Backend): Promise<{ url: string | undefined; dataDir: string }> {
  const dataDir = await makeDataDir();
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const database = await backend.open();
  cleanups.push(database.drop);
  // a SQLite file shared by apps with data dirs of their own
  return { url: database.url ?? join(dataDir, "shared.db"), dataDir };
}

async function app(options: Partial<ServerOptions> & { dataDir?: string }): Promise<BuiltApp> {
  const dataDir = options.dataDir ?? (await makeDataDir());
  if (!options.dataDir) cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  // one deployment: the apps share the signing keys through the database
  const built = await buildApp({
    log: false,
    mailRetryDelayMs: 50,
    mailSenderLoop: true,
    secretKey: TEST_SECRET_KEY,
    ...options,
    dataDir,
  });
  cleanups.push(() => built.close());
  return built;
}

async function smtpSink(port?: number, holdMs?: number): Promise<SmtpSink> {
  const sink = await startSmtpSink({ port, holdMs });
  cleanups.push(() => sink.close());
  return sink;
}

/** The account whose reset e-mails these tests follow. */
async function addAda(server: BuiltApp): Promise<void> {
  await createFirstAdmin(server.services, {
    userName: "ada",
    email: EMAIL,
    password: ADMIN_PASSWORD,
    temporary: false,
  });
}

async function renew(server: BuiltApp): Promise<void> {
  const response = await server.inject({ method: "POST", url: "/renewPassword", payload: { userName: "ada" } });
  expect(response.statusCode).toBe(202);
}

/** `count` messages ("message 0" to user0@example.com, …) written straight into the queue, due now. */
async function queueMessages(server: BuiltApp, count: number): Promise<void> {
  const now = new Date();
  for (let i = 0; i < count; i++) {
    await insertMail(server.services.store.db, {
      id: crypto.randomUUID(),
      recipient: `user${i}@example.com`,
      subject: `message ${i}`,
      text: `body ${i}`,
      html: `<p>body ${i}</p>`,
      now,
    });
  }
}

const queueRows = (server: BuiltApp) =>
  server.services.store.db.selectFrom("mail_queue").selectAll().orderBy("created_at").execute();

/** What `probe` finds, once it finds something (it is asked again every 25 ms, for 10 s at most). */
const eventually = <T>(probe: () => Promise<T | undefined>, what: string): Promise<T> =>
  vi.waitFor(
    async () => {
      const found = await probe();
      if (found === undefined) throw new Error(`still waiting for ${what}`);
      return found;
    },
    { timeout: 10_000, interval: 25 },
  );

/** Sets a new password through the mailed link, on this instance: 204, and the change is mailed in turn. */
async function resetThrough(instance: BuiltApp, mail: ParsedMail, smtp: SmtpSink): Promise<void> {
  const reset = await instance.inject({
    method: "PUT",
    url: "/resetPassword",
    payload: { token: resetLinkOf(mail).token, newPassword: NEW_PASSWORD },
  });
  expect(reset.statusCode).toBe(204);
  await smtp.waitFor((m) => /changed/i.test(m.subject ?? ""));
}

const sentRow = (server: BuiltApp) =>
  eventually(async () => (await queueRows(server)).find((r) => r.status === "sent"), "a sent row");

describe.each(BACKENDS)("mail queue on $name", (backend) => {
  it("retries while SMTP is down and delivers once it listens; the link works", async () => {
    const { url } = await sharedDatabase(backend);
    const port = await closedPort();
    const server = await app({ databaseUrl: url, smtpUrl: `smtp://127.0.0.1:${port}` });
    await addAda(server);

    await renew(server);
    await server.services.mailer.idle();
    const rows = await queueRows(server);
    expect(
      rows.map((r) => r.kind),
      "idle() leaves the job done and its e-mail tried",
    ).toEqual(["link"]);
    const [waiting] = rows;
    // at least one attempt: at 50 ms of back-off, a busy machine may have made the second already
    expect(waiting).toMatchObject({ status: "queued", recipient: EMAIL, sent_at: null });
    expect(waiting!.attempts).toBeGreaterThanOrEqual(1);
    expect(waiting!.last_error).toMatch(/ECONNREFUSED|connect/i);

    const smtp = await smtpSink(port);
    const mail = await smtp.waitFor((m) => m.rcptTo.includes(EMAIL));
    expect(recipientsOf(mail)).toEqual([EMAIL]);
    const sent = await sentRow(server);
    expect(sent.attempts).toBeGreaterThanOrEqual(2);
    // the link does not stay in the database once it has gone
    expect(sent).toMatchObject({ body_text: null, body_html: null, claimed_until: null });

    await resetThrough(server, mail, smtp);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(smtp.messages.map((m) => m.subject)).toEqual([
      "Reset your bizctl password",
      "Your bizctl password was changed",
    ]);
  });

  it("keeps a message queued over a restart and sends it from the new process", async () => {
    const { url, dataDir } = await sharedDatabase(backend);
    const port = await closedPort();
    const first = await buildApp({
      log: false,
      dataDir,
      databaseUrl: url,
      smtpUrl: `smtp://127.0.0.1:${port}`,
      mailRetryDelayMs: 50,
      mailSenderLoop: true,
      secretKey: TEST_SECRET_KEY,
    });
    await addAda(first);
    await renew(first);
    await first.services.mailer.idle();
    await first.close();

    const smtp = await smtpSink();
    const second = await app({ dataDir, databaseUrl: url, smtpUrl: smtp.url });
    const mail = await smtp.waitFor((m) => m.rcptTo.includes(EMAIL));
    expect(resetLinkOf(mail).token.length).toBeGreaterThanOrEqual(22);
    expect(await sentRow(second)).toMatchObject({ status: "sent", body_text: null });
  });

  it("sends each message exactly once with two instances on one database", async () => {
    const { url } = await sharedDatabase(backend);
    const smtp = await smtpSink();
    // one after the other: migrating a fresh database from two instances at once is another matter
    const sentBy = { a: 0, b: 0 };
    const counting = (name: "a" | "b") => ({
      level: "info",
      stream: {
        write(line: string) {
          if (line.includes('"msg":"mail sent"')) sentBy[name]++;
        },
      },
    });
    const a = await app({ databaseUrl: url, smtpUrl: smtp.url, log: counting("a") });
    const b = await app({ databaseUrl: url, smtpUrl: smtp.url, log: counting("b") });
    const count = 40;
    await queueMessages(a, count);
    await Promise.all([a.services.mailer.idle(), b.services.mailer.idle(), a.services.mailer.idle()]);
    await eventually(async () => (smtp.messages.length >= count ? true : undefined), `${count} messages`);
    // time for a duplicate to arrive, were there one
    await new Promise((resolve) => setTimeout(resolve, 300));
    const subjects = smtp.messages.map((m) => m.subject).sort();
    expect(subjects).toEqual(Array.from({ length: count }, (_, i) => `message ${i}`).sort());
    const rows = await queueRows(a);
    expect(rows.filter((r) => r.status === "sent")).toHaveLength(count);
    expect(rows.every((r) => r.attempts === 1)).toBe(true);
    // both senders took part: the test raced them rather than letting one do all the work
    expect(sentBy.a + sentBy.b).toBe(count);
    expect(sentBy.a, JSON.stringify(sentBy)).toBeGreaterThan(0);
    expect(sentBy.b, JSON.stringify(sentBy)).toBeGreaterThan(0);
  });

  it("has several messages in hand at once, over SMTP connections it keeps open between them", async () => {
    const { url } = await sharedDatabase(backend);
    // a relay that takes a while to accept each message: one at a time, they would queue up
    const smtp = await smtpSink(undefined, 200);
    const server = await app({ databaseUrl: url, smtpUrl: smtp.url });
    const count = 3 * MAIL_SENDERS;
    await queueMessages(server, count);
    await server.services.mailer.idle();
    await eventually(async () => (smtp.messages.length >= count ? true : undefined), `${count} messages`);
    expect(smtp.messages.map((m) => m.subject).sort()).toEqual(
      Array.from({ length: count }, (_, i) => `message ${i}`).sort(),
    );
    expect(smtp.stats.mostAtOnce).toBeGreaterThan(1);
    expect(smtp.stats.mostAtOnce).toBeLessThanOrEqual(MAIL_SENDERS);
    expect(smtp.stats.connections).toBeLessThanOrEqual(MAIL_SENDERS);
    expect((await queueRows(server)).every((r) => r.status === "sent" && r.attempts === 1)).toBe(true);
  });

  it("sends a reset link asked for on one instance that another instance then accepts", async () => {
    const { url } = await sharedDatabase(backend);
    const smtp = await smtpSink();
    const a = await app({ databaseUrl: url, smtpUrl: smtp.url });
    const b = await app({ databaseUrl: url, smtpUrl: smtp.url });
    await addAda(a);
    await renew(a);
    const mail = await smtp.waitFor((m) => m.rcptTo.includes(EMAIL));
    await resetThrough(b, mail, smtp);
  });

  it("does not hand out a message while another sender's lease runs, and does after it has run out", async () => {
    const { url } = await sharedDatabase(backend);
    const server = await app({ databaseUrl: url, mailSenderLoop: false });
    const { db, dialect } = server.services.store;
    const id = crypto.randomUUID();
    const now = new Date();
    await insertMail(db, { id, recipient: EMAIL, subject: "s", text: "t", html: "h", now });
    const lease = (claimer: string, at: number) =>
      claimMail(db, dialect, { now: new Date(at), leaseUntil: new Date(at + 60_000), claimer });

    const scenarios = [
      { what: "first sender", claimer: "a", at: now.getTime(), gets: true, attempts: 1 },
      { what: "second sender during the lease", claimer: "b", at: now.getTime() + 30_000, gets: false },
      {
        what: "second sender after the lease (a crashed)",
        claimer: "b",
        at: now.getTime() + 61_000,
        gets: true,
        attempts: 2,
      },
      { what: "first sender again, within b's lease", claimer: "a", at: now.getTime() + 62_000, gets: false },
    ];
    for (const scenario of scenarios) {
      const claimed = await lease(scenario.claimer, scenario.at);
      expect(Boolean(claimed), scenario.what).toBe(scenario.gets);
      if (claimed)
        expect(claimed, scenario.what).toMatchObject({ id, claimed_by: scenario.claimer, attempts: scenario.attempts });
    }
  });
});

describe("mail queue", () => {
  it("gives a message up after the last attempt and keeps it, with its error, without its body", async () => {
    const port = await closedPort();
    const server = await app({ smtpUrl: `smtp://127.0.0.1:${port}`, mailMaxAttempts: 3, mailRetryDelayMs: 20 });
    await addAda(server);
    await renew(server);
    const failed = await eventually(
      async () => (await queueRows(server)).find((r) => r.status === "failed"),
      "a message given up",
    );
    expect(failed).toMatchObject({ attempts: 3, recipient: EMAIL, body_text: null, body_html: null, sent_at: null });
    expect(failed.last_error).toMatch(/ECONNREFUSED|connect/i);
  });

  it("with the loop, a reset request is a job due within the job delay, resolved by the sender into the e-mail", async () => {
    const smtp = await smtpSink();
    const server = await app({ smtpUrl: smtp.url });
    await addAda(server);
    await renew(server);
    const [job] = await queueRows(server);
    expect(job).toMatchObject({ kind: "password_reset", recipient: "", status: "queued", attempts: 0 });
    const delay = Date.parse(job!.next_attempt_at) - Date.parse(job!.created_at);
    expect(delay).toBeGreaterThanOrEqual(0);
    expect(delay).toBeLessThan(MAIL_DEFAULTS.jobDelayMs);
    await server.services.mailer.idle();
    const mail = await smtp.waitFor((m) => m.rcptTo.includes(EMAIL));
    expect(resetLinkOf(mail).token.length).toBeGreaterThanOrEqual(22);
    // the e-mail is a link message: its link was made as it was sent, never queued
    expect((await queueRows(server)).map((r) => r.kind)).toEqual(["link"]);
  });

  it.each([
    { retention: "0 ms", mailRetentionMs: 0, kept: false },
    { retention: "the default (7 days)", mailRetentionMs: undefined, kept: true },
  ])("prunes sent messages after the retention period: $retention", async ({ mailRetentionMs, kept }) => {
    const server = await app({ mailRetentionMs });
    await addAda(server);
    await renew(server);
    await server.services.mailer.idle();
    // every pass prunes first; one more pass, a moment after the one that sent it
    await new Promise((resolve) => setTimeout(resolve, 20));
    await server.services.mailer.idle();
    expect(await queueRows(server)).toMatchObject(kept ? [{ status: "sent", body_text: null }] : []);
    expect(await readdir(server.services.mailer.describe)).toHaveLength(1);
  });

  it("without the loop sends every message it queued as it closes, however many (an embedded import with --invite)", async () => {
    const dataDir = await makeDataDir();
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const embedded = await buildApp({ log: false, dataDir });
    const count = 1234;
    // in batches, as users import sends its bulk requests
    for (let first = 0; first < count; first += 500) {
      await embedded.services.mailer.transaction(async (_trx, queue) => {
        for (let i = first; i < Math.min(first + 500, count); i++) {
          await queue.mail({ to: `user${i}@example.com`, subject: `invitation ${i}`, text: "t", html: "h" });
        }
      });
    }
    await embedded.close();
    expect(await readdir(join(dataDir, "outbox"))).toHaveLength(count);
    const reopened = await app({ dataDir, mailSenderLoop: false });
    expect((await queueRows(reopened)).filter((r) => r.status !== "sent")).toEqual([]);
  });

  it("without the loop (the embedded CLI, the default) sends what it queued as it closes, and leaves the rest of the queue", async () => {
    const dataDir = await makeDataDir();
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const embedded = await buildApp({ log: false, dataDir });
    await addAda(embedded);
    // a message a server queued earlier and is retrying: not this process's to send to the outbox
    const theirs = crypto.randomUUID();
    await insertMail(embedded.services.store.db, {
      id: theirs,
      recipient: "someone@example.com",
      subject: "from a server",
      text: "t",
      html: "h",
      now: new Date(),
    });
    await renew(embedded);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(readdir(join(dataDir, "outbox"))).rejects.toThrow();

    const rows = () => queueRows(embedded);
    const before = await rows();
    expect(before.map((r) => r.status)).toEqual(["queued", "queued"]);
    await embedded.close();

    const files = await readdir(join(dataDir, "outbox"));
    expect(files).toHaveLength(1);
    const reopened = await app({ dataDir, mailSenderLoop: false });
    const after = await queueRows(reopened);
    expect(after.find((r) => r.id === theirs)).toMatchObject({ status: "queued", attempts: 0 });
    expect(after.find((r) => r.id !== theirs)).toMatchObject({ status: "sent", recipient: EMAIL });
  });
});
