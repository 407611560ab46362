import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backupInstance } from "../../src/server/offline-tasks.js";
import { closedPort } from "../helpers/cli.js";
import { resetLinkOf, type SmtpSink, startSmtpSink } from "../helpers/mail.js";
import { startPostgresTestServer } from "../helpers/postgres.js";
import {
  caller,
  createResource,
  loginToken,
  makeDataDir,
  startTestServer,
  type TestServer,
} from "../helpers/server.js";

/**
 * No bearer secret at rest in clear (spec 1.1): after a reset link and an invitation are mailed
 * (through a real SMTP server), neither link's token can be found in the data dir (the database,
 * its WAL and shared memory), in a `server backup` copy, or in a `pg_dump` of PostgreSQL.
 */

interface Mailed {
  reset: string;
  invitation: string;
}

/** Mails a reset link and an invitation; returns the two tokens as the SMTP server received them. */
async function mailTwoLinks(server: TestServer, smtp: SmtpSink): Promise<Mailed> {
  const admin = caller(server.app, await loginToken(server.app, server.admin.userName, server.admin.password));
  const resetEmail = `reset-${crypto.randomUUID().slice(0, 6)}@example.com`;
  const inviteEmail = `invite-${crypto.randomUUID().slice(0, 6)}@example.com`;
  const forReset = await createResource(admin, {
    resourceType: "User",
    userName: resetEmail.split("@")[0]!,
    emails: [{ value: resetEmail, primary: true }],
    password: "ochre violin summit 4478 tundra",
  });
  const invited = await createResource(admin, {
    resourceType: "User",
    userName: inviteEmail.split("@")[0]!,
    emails: [{ value: inviteEmail, primary: true }],
  });
  const asked = await server.app.inject({
    method: "POST",
    url: "/renewPassword",
    payload: { userName: forReset.userName },
  });
  expect(asked.statusCode).toBe(202);
  expect((await admin("POST", `/Resources/${invited.id}/invitation`)).statusCode).toBe(202);
  await server.app.services.mailer.idle();
  const reset = resetLinkOf(await smtp.waitFor((m) => m.rcptTo.includes(resetEmail))).token;
  const invitation = resetLinkOf(await smtp.waitFor((m) => m.rcptTo.includes(inviteEmail))).token;
  return { reset, invitation };
}

/** Every file under `dir`, as bytes. */
async function filesUnder(dir: string): Promise<{ file: string; bytes: Buffer }[]> {
  const out: { file: string; bytes: Buffer }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    out.push({ file, bytes: await readFile(file) });
  }
  return out;
}

const holding = (files: { file: string; bytes: Buffer }[], secret: string) =>
  files.filter(({ bytes }) => bytes.includes(secret)).map(({ file }) => file);

describe("secrets at rest on SQLite", () => {
  let smtp: SmtpSink;
  let server: TestServer;
  let tokens: Mailed;
  let backupDir: string;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    server = await startTestServer({ smtpUrl: smtp.url });
    tokens = await mailTwoLinks(server, smtp);
    backupDir = await makeDataDir();
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
    await rm(backupDir, { recursive: true, force: true });
  });

  it.each(["reset", "invitation"] as const)("no file of the data dir holds the %s link's token", async (kind) => {
    const files = await filesUnder(server.dataDir);
    expect(files.map((f) => f.file).some((f) => f.endsWith("-wal"))).toBe(true);
    expect(holding(files, tokens[kind])).toEqual([]);
  });

  it.each(["reset", "invitation"] as const)("a server backup copy does not hold the %s link's token", async (kind) => {
    const file = join(backupDir, `copy-${kind}.db`);
    await backupInstance({ dataDir: server.dataDir, file, force: false });
    expect(holding(await filesUnder(backupDir), tokens[kind])).toEqual([]);
  });

  it("the links still work: the token is what was mailed", async () => {
    const used = await server.app.inject({
      method: "PUT",
      url: "/resetPassword",
      payload: { token: tokens.reset, newPassword: "sienna pebble lantern 3391 orchid" },
    });
    expect(used.statusCode, used.body).toBe(204);
  });
});

describe("secrets at rest on PostgreSQL", () => {
  let smtp: SmtpSink;
  let server: TestServer;
  let tokens: Mailed;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    server = await startPostgresTestServer({ smtpUrl: smtp.url });
    tokens = await mailTwoLinks(server, smtp);
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it("a pg_dump holds neither link's token", async () => {
    const dump = await execa("pg_dump", ["--no-owner", server.databaseUrl!]);
    expect(dump.stdout).toContain("password_resets");
    expect(dump.stdout.includes(tokens.reset)).toBe(false);
    expect(dump.stdout.includes(tokens.invitation)).toBe(false);
  });
});

describe.each([
  ["SQLite", startTestServer],
  ["PostgreSQL", startPostgresTestServer],
] as const)("a link waiting in the queue on %s (the mail server is down)", (store, start) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await start({ smtpUrl: `smtp://127.0.0.1:${await closedPort()}`, mailRetryDelayMs: 3_600_000 });
  });
  afterAll(async () => server?.close());

  it("is kept without its link: the queue holds what the mail says, the token is made when it leaves", async () => {
    const admin = caller(server.app, await loginToken(server.app, server.admin.userName, server.admin.password));
    const user = await createResource(admin, {
      resourceType: "User",
      userName: "waiting",
      emails: [{ value: "waiting@example.com", primary: true }],
    });
    expect((await admin("POST", `/Resources/${user.id}/invitation`)).statusCode).toBe(202);
    await server.app.services.mailer.idle();
    const queued = await server.app.services.store.db.selectFrom("mail_queue").selectAll().execute();
    expect(queued).toMatchObject([{ status: "queued", attempts: 1, recipient: "waiting@example.com" }]);
    const copy =
      store === "SQLite"
        ? Buffer.concat((await filesUnder(server.dataDir)).map((f) => f.bytes)).toString("latin1")
        : (await execa("pg_dump", ["--no-owner", server.databaseUrl!])).stdout;
    expect(copy).toContain("waiting@example.com");
    expect(copy).not.toMatch(/resetPassword\?token=/);
  });
});
