/**
 * Invitations end to end (issue 14, part 5): `users create --invite` and `users invite` against a
 * real `server start` that mails through a real SMTP server; the link opens in Debian's chromium
 * (playwright-core), which sets the first password; the user then logs in. The link works once,
 * a resend voids the older one, and it expires (a second server on the same database with a
 * short --invite-ttl). Needs `npm run build` first.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../helpers/browser.js";
import {
  bizctl,
  type Env,
  errorOf,
  json,
  login,
  makeSandbox,
  PASSWORD,
  type RunningServer,
  type Sandbox,
  show,
  startServer,
} from "../helpers/cli.js";
import { htmlLinksOf, type ParsedMail, resetLinkOf, type SmtpSink, startSmtpSink } from "../helpers/mail.js";

const CHOSEN = "purple elephants dance at midnight 7";

describe("invitations (real SMTP, real browser)", () => {
  let smtp: SmtpSink;
  let sandbox: Sandbox;
  let server: RunningServer;
  let browser: Browser;
  let env: Env;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    sandbox = await makeSandbox();
    const init = await bizctl(["server", "init", "--admin-user", "admin", "--password-stdin"], {
      env: sandbox.env,
      input: `${PASSWORD}\n`,
    });
    if (init.exitCode !== 0) throw new Error(`server init failed: ${show(init)}`);
    server = await startServer(sandbox.dataDir, { env: sandbox.env, args: ["--smtp-url", smtp.url] });
    env = sandbox.env;
    const added = await bizctl(["profile", "add", "r", "--server", server.url, "--use"], { env });
    expect(added.exitCode, show(added)).toBe(0);
    const loggedIn = await login(env, "admin", PASSWORD);
    expect(loggedIn.exitCode, show(loggedIn)).toBe(0);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await smtp?.close();
    await sandbox?.remove();
  });

  const taken = new Set<ParsedMail>();
  /** The next invitation mailed to this address (one not returned before). */
  async function nextMailTo(address: string): Promise<ParsedMail> {
    const mail = await smtp.waitFor((m) => m.rcptTo.includes(address) && !taken.has(m));
    taken.add(mail);
    return mail;
  }

  const putPassword = (base: string, token: string, newPassword: string) =>
    fetch(`${base}/resetPassword`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, newPassword }),
    });

  async function invitedFlag(userName: string): Promise<boolean> {
    const result = await bizctl(["users", "get", userName, "--json"], { env });
    expect(result.exitCode, show(result)).toBe(0);
    return json(result).invited;
  }

  it("reads as an invitation; a resend voids the older link; the browser sets the first password once", async () => {
    const created = await bizctl(
      ["users", "create", "--user-name", "asmith", "--email", "asmith@example.com", "--invite", "--json"],
      { env },
    );
    expect(created.exitCode, show(created)).toBe(0);
    expect(created.stderr).toContain("Invitation for asmith queued to asmith@example.com");
    const first = await nextMailTo("asmith@example.com");
    expect(first.subject).toMatch(/invited/i);
    expect(first.text).toContain("you are invited to bizctl");
    expect(first.text).toContain("within 72 hours");
    expect(first.text).not.toMatch(/did not ask|ignore this message|reset your/i);
    const older = resetLinkOf(first);
    expect(older.link).toContain(server.url);
    expect(htmlLinksOf(first)).toContain(`${older.link}&invitation=1`);
    expect(await invitedFlag("asmith")).toBe(true);
    const listed = await bizctl(["users", "list", "--filter", "invited eq true", "--json"], { env });
    expect(json(listed).map((u: { userName: string }) => u.userName)).toEqual(["asmith"]);

    // the resend, by e-mail address: only its link works
    const resent = await bizctl(["users", "invite", "asmith@example.com"], { env });
    expect(resent.exitCode, show(resent)).toBe(0);
    const latestMail = await nextMailTo("asmith@example.com");
    const latest = resetLinkOf(latestMail);
    expect(latest.token).not.toBe(older.token);
    expect((await putPassword(server.url, older.token, CHOSEN)).status).toBe(400);

    const page = await browser.newPage();
    await page.goto(htmlLinksOf(latestMail)[0]!);
    await expect.poll(() => page.title()).toMatch(/set your password/i);
    expect(await page.locator("h1").textContent()).toBe("Set your password");
    await page.getByLabel("New password", { exact: true }).fill(CHOSEN);
    await page.getByLabel("Repeat the new password").fill(CHOSEN);
    await page.getByRole("button", { name: /set your password/i }).click();
    // hashing the password takes a while on a busy machine
    await expect.poll(() => page.locator("#result").getAttribute("class"), { timeout: 20_000 }).toBe("ok");
    expect(await page.locator("#result").textContent()).toMatch(/password is set/);
    await page.close();

    // the user logs in with it, and is not asked for another
    const userEnv = { ...env, BIZCTL_CONFIG_DIR: `${sandbox.root}/asmith` };
    expect((await bizctl(["profile", "add", "r", "--server", server.url, "--use"], { env: userEnv })).exitCode).toBe(0);
    const userLogin = await login(userEnv, "asmith", CHOSEN);
    expect(userLogin.exitCode, show(userLogin)).toBe(0);
    expect(json(userLogin).firstLogin).toBe(false);

    // once: the link is spent, the account no longer shows as invited, and no "password changed" notice went out
    const again = await putPassword(server.url, latest.token, "another long passphrase to try 12");
    expect(again.status).toBe(400);
    expect(((await again.json()) as { code: string }).code).toBe("invalid_reset_token");
    expect(await invitedFlag("asmith")).toBe(false);
    expect(smtp.messages.filter((m) => m.rcptTo.includes("asmith@example.com"))).toHaveLength(2);

    // and an invitation is for a first password only
    const late = await bizctl(["users", "invite", "asmith"], { env });
    expect(late.exitCode, show(late)).toBe(6);
    expect(errorOf(late).message).toContain("already chosen a password");
  });

  it("expires: a server with a short --invite-ttl mails a link that stops working", async () => {
    const short = await startServer(sandbox.dataDir, {
      env: sandbox.env,
      args: ["--smtp-url", smtp.url, "--invite-ttl", "2"],
    });
    try {
      const created = await bizctl(
        ["users", "create", "--user-name", "bjones", "--email", "bjones@example.com", "--no-password", "--json"],
        { env },
      );
      expect(created.exitCode, show(created)).toBe(0);
      const sent = await bizctl(["--server", short.url, "users", "invite", "bjones"], {
        env: { ...env, BIZCTL_TOKEN: (await bizctl(["auth", "token"], { env })).stdout.trim() },
      });
      expect(sent.exitCode, show(sent)).toBe(0);
      const mail = await nextMailTo("bjones@example.com");
      expect(mail.text).toContain("within 2 seconds");
      const { token } = resetLinkOf(mail);
      // past the two seconds (the expiry is checked against the clock, not measured here)
      await new Promise((done) => setTimeout(done, 3_000));
      const expired = await putPassword(short.url, token, CHOSEN);
      expect(expired.status).toBe(400);
      expect(await invitedFlag("bjones"), "an expired invitation still awaits a resend").toBe(true);
    } finally {
      await short.stop();
    }
  });
});
