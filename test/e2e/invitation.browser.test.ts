/**
 * Invitations end to end (issue 14, part 5): `users create --invite` and `users invite` against a
 * real `server start` that mails through a real SMTP server; the link opens in Debian's chromium
 * (playwright-core), which sets the first password; the user then logs in. The link works once,
 * a resend voids the older one, and it expires (a second server on the same database with a
 * short --invite-ttl). Needs `npm run build` first.
 */
import { describe, expect, it } from "vitest";
import { useChromium } from "../helpers/browser.js";
import { bizctl, errorOf, json, login, show, startServer, useServer } from "../helpers/cli.js";
import { htmlLinksOf, type ParsedMail, resetLinkOf, useSmtpSink } from "../helpers/mail.js";

const CHOSEN = "purple elephants dance at midnight 7";

describe("invitations (real SMTP, real browser)", () => {
  const smtp = useSmtpSink();
  // the admin logged in through a current profile `r` at the server
  const s = useServer({ serverArgs: () => ["--smtp-url", smtp.url] });
  const chromium = useChromium();

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
    const result = await s.run(["users", "get", userName, "--json"]);
    expect(result.exitCode, show(result)).toBe(0);
    return json(result).invited;
  }

  it("reads as an invitation; a resend voids the older link; the browser sets the first password once", async () => {
    const created = await s.run([
      "users",
      "create",
      "--user-name",
      "asmith",
      "--email",
      "asmith@example.com",
      "--invite",
      "--json",
    ]);
    expect(created.exitCode, show(created)).toBe(0);
    expect(created.stderr).toContain("Invitation for asmith queued to asmith@example.com");
    const first = await nextMailTo("asmith@example.com");
    expect(first.subject).toMatch(/invited/i);
    expect(first.text).toContain("you are invited to bizctl");
    expect(first.text).toContain("within 72 hours");
    expect(first.text).not.toMatch(/did not ask|ignore this message|reset your/i);
    const older = resetLinkOf(first);
    expect(older.link).toContain(s.server.url);
    expect(htmlLinksOf(first)).toContain(`${older.link}&invitation=1`);
    expect(await invitedFlag("asmith")).toBe(true);
    const listed = await s.run(["users", "list", "--filter", "invited eq true", "--json"]);
    expect(json(listed).map((u: { userName: string }) => u.userName)).toEqual(["asmith"]);

    // the resend, by e-mail address: only its link works
    const resent = await s.run(["users", "invite", "asmith@example.com"]);
    expect(resent.exitCode, show(resent)).toBe(0);
    const latestMail = await nextMailTo("asmith@example.com");
    const latest = resetLinkOf(latestMail);
    expect(latest.token).not.toBe(older.token);
    expect((await putPassword(s.server.url, older.token, CHOSEN)).status).toBe(400);

    const page = await chromium.newPage();
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
    const userEnv = { ...s.env, BIZCTL_CONFIG_DIR: `${s.sandbox.root}/asmith` };
    expect((await bizctl(["profile", "add", "r", "--server", s.server.url, "--use"], { env: userEnv })).exitCode).toBe(
      0,
    );
    const userLogin = await login(userEnv, "asmith", CHOSEN);
    expect(userLogin.exitCode, show(userLogin)).toBe(0);
    expect(json(userLogin).firstLogin).toBe(false);

    // once: the link is spent, the account no longer shows as invited, and no "password changed" notice went out
    const again = await putPassword(s.server.url, latest.token, "another long passphrase to try 12");
    expect(again.status).toBe(400);
    expect(((await again.json()) as { code: string }).code).toBe("invalid_reset_token");
    expect(await invitedFlag("asmith")).toBe(false);
    expect(smtp.messages.filter((m) => m.rcptTo.includes("asmith@example.com"))).toHaveLength(2);

    // and an invitation is for a first password only
    const late = await s.run(["users", "invite", "asmith"]);
    expect(late.exitCode, show(late)).toBe(6);
    expect(errorOf(late).message).toContain("already chosen a password");
  });

  it("expires: a server with a short --invite-ttl mails a link that stops working", async () => {
    const short = await startServer(s.sandbox.dataDir, {
      env: s.sandbox.env,
      args: ["--smtp-url", smtp.url, "--invite-ttl", "2"],
    });
    try {
      const created = await s.run([
        "users",
        "create",
        "--user-name",
        "bjones",
        "--email",
        "bjones@example.com",
        "--no-password",
        "--json",
      ]);
      expect(created.exitCode, show(created)).toBe(0);
      const sent = await bizctl(["--server", short.url, "users", "invite", "bjones"], {
        env: { ...s.env, BIZCTL_TOKEN: (await s.run(["auth", "token"])).stdout.trim() },
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
