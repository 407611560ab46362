import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backupInstance } from "../../src/server/offline-tasks.js";
import { closedPort } from "../helpers/cli.js";
import { resetLinkOf, type SmtpSink, startSmtpSink } from "../helpers/mail.js";
import { STORES } from "../helpers/postgres.js";
import {
  type Call,
  createResource,
  makeDataDir,
  NEW_PASSWORD,
  TEMP_PASSWORD,
  type TestServer,
  useTestServer,
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
async function mailTwoLinks(server: TestServer, admin: Call, smtp: SmtpSink): Promise<Mailed> {
  const resetEmail = `reset-${crypto.randomUUID().slice(0, 6)}@example.com`;
  const inviteEmail = `invite-${crypto.randomUUID().slice(0, 6)}@example.com`;
  const forReset = await createResource(admin, {
    resourceType: "User",
    userName: resetEmail.split("@")[0]!,
    emails: [{ value: resetEmail, primary: true }],
    password: TEMP_PASSWORD,
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

type Files = { file: string; bytes: Buffer }[];

/** Where each store keeps what it wrote, as a reader at rest finds it. */
const AT_REST: Record<(typeof STORES)[number][0], { copy: string; read(server: TestServer): Promise<Files> }[]> = {
  SQLite: [
    {
      copy: "the files of the data dir",
      read: async (server) => {
        const files = await filesUnder(server.dataDir);
        expect(files.map((f) => f.file).some((f) => f.endsWith("-wal"))).toBe(true);
        return files;
      },
    },
    {
      copy: "a server backup copy",
      read: async (server) => {
        const dir = await makeDataDir();
        try {
          await backupInstance({ dataDir: server.dataDir, file: join(dir, "copy.db"), force: false });
          return await filesUnder(dir);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      },
    },
  ],
  PostgreSQL: [
    {
      copy: "a pg_dump",
      read: async (server) => {
        const dump = await execa("pg_dump", ["--no-owner", server.databaseUrl!]);
        expect(dump.stdout).toContain("password_resets");
        return [{ file: "pg_dump", bytes: Buffer.from(dump.stdout) }];
      },
    },
  ],
};

describe.each(STORES)("secrets at rest on %s", (store, start) => {
  let smtp: SmtpSink;
  let tokens: Mailed;
  // runs after the server has closed (hooks after the last test run last to first)
  afterAll(async () => smtp?.close());
  const server = useTestServer(async () => {
    smtp = await startSmtpSink();
    return { smtpUrl: smtp.url };
  }, start);
  beforeAll(async () => {
    tokens = await mailTwoLinks(server, server.call, smtp);
  });

  for (const { copy, read } of AT_REST[store])
    for (const kind of ["reset", "invitation"] as const)
      it(`no ${kind} link's token in ${copy}`, async () => {
        expect(holding(await read(server), tokens[kind])).toEqual([]);
      });

  it("the links still work: the token is what was mailed", async () => {
    const used = await server.anonymous("PUT", "/resetPassword", {
      token: tokens.reset,
      newPassword: NEW_PASSWORD,
    });
    expect(used.statusCode, used.body).toBe(204);
  });
});

describe.each(STORES)("a link waiting in the queue on %s (the mail server is down)", (store, start) => {
  const server = useTestServer(
    async () => ({ smtpUrl: `smtp://127.0.0.1:${await closedPort()}`, mailRetryDelayMs: 3_600_000 }),
    start,
  );

  it("is kept without its link: the queue holds what the mail says, the token is made when it leaves", async () => {
    const admin = server.call;
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
