/**
 * Password recovery end to end: the built CLI, a real `server start` process and a real SMTP
 * server (`smtp-server`) on loopback; the mail server down; `server outbox` in embedded mode.
 * Needs `npm run build` first.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bizctl,
  closedPort,
  type Env,
  errorOf,
  json,
  leaksOf,
  login,
  makeSandbox,
  PASSWORD,
  type RunningServer,
  type Sandbox,
  show,
  startServer,
} from "../helpers/cli.js";
import { htmlLinksOf, recipientsOf, resetLinkOf, type SmtpSink, startSmtpSink } from "../helpers/mail.js";

const TEMPORARY = "temporary passphrase for a new hire 1";
const NEW_PASSWORD = "purple elephants dance at midnight 7";

/** `server init --password-stdin` on a fresh sandbox (admin `admin`, optionally with an e-mail). */
async function initSandbox(adminEmail?: string): Promise<Sandbox> {
  const sandbox = await makeSandbox();
  const init = await bizctl(
    [
      "server",
      "init",
      "--admin-user",
      "admin",
      "--password-stdin",
      ...(adminEmail ? ["--admin-email", adminEmail] : []),
    ],
    { env: sandbox.env, input: `${PASSWORD}\n` },
  );
  if (init.exitCode !== 0) throw new Error(`server init failed: ${show(init)}`);
  return sandbox;
}

/** A config dir of its own in the sandbox whose current profile points at the server. */
async function configFor(sandbox: Sandbox, name: string, server: RunningServer): Promise<Env> {
  const configDir = join(sandbox.root, name);
  await mkdir(configDir, { recursive: true });
  const env = { ...sandbox.env, BIZCTL_CONFIG_DIR: configDir };
  const added = await bizctl(["profile", "add", "r", "--server", server.url, "--use"], { env });
  if (added.exitCode !== 0) throw new Error(`profile add failed: ${show(added)}`);
  return env;
}

/** The pino JSON lines of a server's stdout. */
function logLines(server: RunningServer): { level: number; msg: string; [key: string]: unknown }[] {
  return server
    .logs()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));
}

async function eventually<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("password recovery with a real SMTP server", () => {
  let smtp: SmtpSink;
  let sandbox: Sandbox;
  let server: RunningServer;
  let publicUrl: string;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    sandbox = await initSandbox();
    // the public URL must be known before the start: pick a free port and pass both
    const port = await closedPort();
    publicUrl = `http://127.0.0.1:${port}`;
    server = await startServer(sandbox.dataDir, {
      env: sandbox.env,
      args: ["--port", String(port), "--public-url", publicUrl, "--smtp-url", smtp.url],
    });
  });
  afterAll(async () => {
    await server?.stop();
    await smtp?.close();
    await sandbox?.remove();
  });

  it("e-mails a link; the CLI resets with its token; old sessions end; the new password logs in", async () => {
    expect(server.url).toBe(publicUrl);
    const adminEnv = await configFor(sandbox, "c-admin", server);
    const adminLogin = await login(adminEnv, "admin", PASSWORD);
    expect(adminLogin.exitCode, show(adminLogin)).toBe(0);
    const created = await bizctl(
      ["users", "create", "--user-name", "jdoe", "--email", "jdoe@example.com", "--password-stdin"],
      { env: adminEnv, input: `${TEMPORARY}\n` },
    );
    expect(created.exitCode, show(created)).toBe(0);

    // jdoe logs in with the temporary password and sets one of its own, as a first login must: token A
    const jdoeEnv = await configFor(sandbox, "c-jdoe", server);
    const first = await login(jdoeEnv, "jdoe", TEMPORARY, "amber kettle orbit 5512 willow");
    expect(first.exitCode, show(first)).toBe(0);
    const tokenA = (await bizctl(["auth", "token"], { env: jdoeEnv })).stdout.trim();
    expect(tokenA).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

    // anyone (no login) asks for a link
    const anonymousEnv = await configFor(sandbox, "c-anonymous", server);
    const renew = await bizctl(["auth", "renew-password", "--user", "jdoe"], { env: anonymousEnv });
    expect(renew.exitCode, show(renew)).toBe(0);
    expect(json(renew)).toMatchObject({ status: "accepted" });

    const mail = await smtp.waitFor((m) => m.rcptTo.includes("jdoe@example.com"));
    expect(recipientsOf(mail)).toEqual(["jdoe@example.com"]);
    expect(mail.subject).toMatch(/reset/i);
    const { link, base, token } = resetLinkOf(mail);
    expect(base).toBe(publicUrl);
    expect(htmlLinksOf(mail)).toEqual([link]);

    const reset = await bizctl(["auth", "reset-password", "--token", token, "--password-stdin"], {
      env: anonymousEnv,
      input: `${NEW_PASSWORD}\n`,
    });
    expect(reset.exitCode, show(reset)).toBe(0);
    expect(reset.stderr).toMatch(/log in/i);

    // token A is refused: stored in the profile and given as BIZCTL_TOKEN alike
    const stale = await bizctl(["auth", "status"], { env: jdoeEnv });
    expect(stale.exitCode, show(stale)).toBe(4);
    expect(errorOf(stale).code).toBe("token_revoked");
    const viaEnv = await bizctl(["auth", "status"], { env: { ...anonymousEnv, BIZCTL_TOKEN: tokenA } });
    expect(viaEnv.exitCode, show(viaEnv)).toBe(4);

    const old = await login(jdoeEnv, "jdoe", TEMPORARY);
    expect(old.exitCode, show(old)).toBe(4);
    const fresh = await login(jdoeEnv, "jdoe", NEW_PASSWORD);
    expect(fresh.exitCode, show(fresh)).toBe(0);
    expect(json(fresh)).toMatchObject({ user: "jdoe", firstLogin: false });

    // the link works once
    const again = await bizctl(["auth", "reset-password", "--token", token, "--password-stdin"], {
      env: anonymousEnv,
      input: "another long passphrase to try 12\n",
    });
    expect(again.exitCode, show(again)).toBe(7);
    expect(errorOf(again).code).toBe("invalid_reset_token");

    // a notice went out too
    const notice = await smtp.waitFor((m) => m.rcptTo.includes("jdoe@example.com") && /changed/i.test(m.subject ?? ""));
    expect(notice.text).not.toContain(token);

    // neither the token nor a password reached the server's log or any CLI output
    for (const secret of [token, NEW_PASSWORD, TEMPORARY]) expect(leaksOf(secret)).toEqual([]);
  });

  it("answers an unknown user with the same exit code and output, and sends nothing", async () => {
    const env = await configFor(sandbox, "c-unknown", server);
    const before = smtp.messages.length;
    // the unknown one first: once the known one's e-mail is in, the unknown one's job has long ended
    const unknown = await bizctl(["auth", "renew-password", "--user", "nobody-here"], { env });
    const known = await bizctl(["auth", "renew-password", "--user", "jdoe"], { env });
    expect(unknown.exitCode, show(unknown)).toBe(0);
    expect(unknown.stdout).toBe(known.stdout);
    expect(unknown.stderr).toBe(known.stderr);
    await smtp.waitFor((m) => smtp.messages.indexOf(m) >= before);
    expect(smtp.messages.slice(before).map((m) => m.rcptTo)).toEqual([["jdoe@example.com"]]);
  });
});

describe("password recovery with the mail server down", () => {
  let sandbox: Sandbox;
  let server: RunningServer;

  beforeAll(async () => {
    sandbox = await initSandbox("admin@example.com");
    server = await startServer(sandbox.dataDir, {
      env: sandbox.env,
      args: ["--smtp-url", `smtp://127.0.0.1:${await closedPort()}`],
    });
  });
  afterAll(async () => {
    await server?.stop();
    await sandbox?.remove();
  });

  it("still answers 202 at once and logs that the mail was not sent", async () => {
    const started = performance.now();
    const response = await fetch(`${server.url}/renewPassword`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "admin@example.com" }),
    });
    const elapsed = performance.now() - started;
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({ status: "accepted" });
    expect(elapsed).toBeLessThan(2000);

    const warning = await eventually(
      () => logLines(server).find((line) => /mail not sent/.test(line.msg)),
      10_000,
      `a "mail not sent" log line in:\n${server.logs()}`,
    );
    expect(warning.level).toBeGreaterThanOrEqual(40);
    // the log names the problem, never the link
    expect(server.logs()).not.toMatch(/resetPassword\?token=[A-Za-z0-9_-]{10}/);

    // the message waits in the database, visible to an operator, and nothing there shows the link
    const queue = await bizctl(["server", "mail-queue", "--status", "queued", "--json"], { env: sandbox.env });
    expect(queue.exitCode, show(queue)).toBe(0);
    const rows = json<Record<string, unknown>[]>(queue);
    expect(rows).toEqual([
      expect.objectContaining({ status: "queued", to: "admin@example.com", subject: expect.stringMatching(/reset/i) }),
    ]);
    expect(rows[0]!.attempts).toBeGreaterThanOrEqual(1);
    expect(String(rows[0]!.lastError)).toMatch(/ECONNREFUSED|connect/i);
    expect(queue.stdout).not.toMatch(/token=/);
  });

  it("stops at once on SIGTERM, without waiting out the retries, and leaves the message queued", async () => {
    const started = performance.now();
    const code = await server.stop();
    expect(performance.now() - started).toBeLessThan(3000);
    expect(code, server.logs()).toBe(0);
    const queue = await bizctl(["server", "mail-queue", "--status", "queued", "--json"], { env: sandbox.env });
    expect(json(queue)).toHaveLength(1);
  });
});

describe("server outbox (embedded)", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await initSandbox("admin@example.com");
  });
  afterAll(async () => sandbox?.remove());

  it("lists the e-mail an embedded renew-password wrote and shows it; an unknown id exits 3", async () => {
    const empty = await bizctl(["server", "outbox", "--json"], { env: sandbox.env });
    expect(empty.exitCode, show(empty)).toBe(0);
    expect(json(empty)).toEqual([]);

    const renew = await bizctl(["auth", "renew-password", "--user", "admin"], { env: sandbox.env });
    expect(renew.exitCode, show(renew)).toBe(0);

    const list = await bizctl(["server", "outbox", "--json"], { env: sandbox.env });
    expect(list.exitCode, show(list)).toBe(0);
    const mails = json<{ id: string; to: string; subject: string; date: string; size: number }[]>(list);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.to).toContain("admin@example.com");
    expect(mails[0]!.subject).toMatch(/reset/i);
    expect(mails[0]!.id).toMatch(/^[A-Za-z0-9._-]+$/);
    // `list` is the same as the bare group, and --data-dir selects the same outbox
    const viaList = await bizctl(["server", "outbox", "list", "--json", "--data-dir", sandbox.dataDir], {
      env: { ...sandbox.env, BIZCTL_DATA_DIR: join(sandbox.root, "elsewhere") },
    });
    expect(viaList.exitCode, show(viaList)).toBe(0);
    expect(json(viaList)).toEqual(mails);

    const shown = await bizctl(["server", "outbox", "show", mails[0]!.id], { env: sandbox.env });
    expect(shown.exitCode, show(shown)).toBe(0);
    const elsewhere = { ...sandbox.env, BIZCTL_DATA_DIR: join(sandbox.root, "elsewhere") };
    const shownVia = await bizctl(["server", "outbox", "show", mails[0]!.id, "--data-dir", sandbox.dataDir], {
      env: elsewhere,
    });
    expect(shownVia.exitCode, show(shownVia)).toBe(0);
    expect(shownVia.stdout).toBe(shown.stdout);
    const raw = await bizctl(["server", "outbox", "show", mails[0]!.id, "--raw"], { env: sandbox.env });
    expect(raw.exitCode, show(raw)).toBe(0);
    const parsed = await simpleParser(raw.stdout);
    expect(recipientsOf(parsed)).toEqual(["admin@example.com"]);
    const { link } = resetLinkOf(parsed);
    // decoded for people: the headers that matter, and the link whole on one line
    expect(shown.stdout).toMatch(/^From: .*\nTo: .*admin@example\.com.*\nSubject: .*reset/i);
    expect(shown.stdout.split("\n")).toContain(link);
    const onlyLink = await bizctl(["server", "outbox", "show", mails[0]!.id, "--link"], { env: sandbox.env });
    expect(onlyLink.stdout).toBe(`${link}\n`);
    for (const [to, count] of [
      ["ADMIN@example.com", 1],
      ["someone@example.com", 0],
    ] as const) {
      const filtered = await bizctl(["server", "outbox", "list", "--to", to, "--json"], { env: sandbox.env });
      expect(json<unknown[]>(filtered), to).toHaveLength(count);
    }

    const missing = await bizctl(["server", "outbox", "show", "2027-01-01T00-00-00-000Z-deadbeef"], {
      env: sandbox.env,
    });
    expect(missing.exitCode, show(missing)).toBe(3);
    expect(errorOf(missing).code).toBe("not_found");
    const hostile = await bizctl(["server", "outbox", "show", "../../etc/passwd"], { env: sandbox.env });
    expect(hostile.exitCode, show(hostile)).toBe(2);

    // it went through the queue: one row, sent, its body (and the link in it) gone
    const queue = await bizctl(["server", "mail-queue", "--json"], { env: sandbox.env });
    expect(queue.exitCode, show(queue)).toBe(0);
    expect(json(queue)).toEqual([
      expect.objectContaining({ status: "sent", to: "admin@example.com", attempts: 1, nextAttemptAt: null }),
    ]);
    const none = await bizctl(["server", "mail-queue", "--status", "failed", "--json"], { env: sandbox.env });
    expect(json(none)).toEqual([]);
  });
});
