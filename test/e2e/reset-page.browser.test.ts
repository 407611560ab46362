/**
 * The reset page in a real browser: Debian's chromium (`apt-get install -y chromium`) driven by
 * playwright-core, against a real `server start` that mails through a real SMTP server.
 * Needs `npm run build` first. Run it alone with `npx vitest run test/e2e/reset-page.browser.test.ts`
 * (or `npx vitest run browser`). Screenshots go to test-artifacts/ (reset-form, reset-success, reset-used).
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../helpers/browser.js";
import {
  bizctl,
  makeSandbox,
  PASSWORD,
  ROOT,
  type RunningServer,
  type Sandbox,
  show,
  startServer,
} from "../helpers/cli.js";
import { resetLinkOf, type SmtpSink, startSmtpSink } from "../helpers/mail.js";

const ARTIFACTS = join(ROOT, "test-artifacts");
const NEW_PASSWORD = "purple elephants dance at midnight 7";

describe("the reset page in a real browser (chromium)", () => {
  let smtp: SmtpSink;
  let sandbox: Sandbox;
  let server: RunningServer;
  let browser: Browser;
  /** every console message and page error of every page, for the CSP check */
  const consoleLog: string[] = [];

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    smtp = await startSmtpSink();
    sandbox = await makeSandbox();
    const init = await bizctl(
      ["server", "init", "--admin-user", "admin", "--admin-email", "admin@example.com", "--password-stdin"],
      { env: sandbox.env, input: `${PASSWORD}\n` },
    );
    if (init.exitCode !== 0) throw new Error(`server init failed: ${show(init)}`);
    // no --public-url: links are built from the address the server listens on
    server = await startServer(sandbox.dataDir, { env: sandbox.env, args: ["--smtp-url", smtp.url] });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await smtp?.close();
    await sandbox?.remove();
  });

  async function openPage(link: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
    page.on("console", (message) => consoleLog.push(`${message.type()}: ${message.text()}`));
    page.on("pageerror", (error) => consoleLog.push(`pageerror: ${error.message}`));
    const response = await page.goto(link);
    expect(response?.status()).toBe(200);
    await expect.poll(() => page.title()).toMatch(/new password/i);
    return page;
  }

  async function submit(page: Page, password: string, repeat = password): Promise<void> {
    // found by their labels, as a screen reader would
    await page.getByLabel("New password", { exact: true }).fill(password);
    await page.getByLabel("Repeat the new password").fill(repeat);
    await page.getByRole("button", { name: /set the new password/i }).click();
  }

  const result = (page: Page) => page.locator("#result");

  it("sets the password from the e-mailed link, then refuses the used link", async () => {
    const renew = await fetch(`${server.url}/renewPassword`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ userName: "admin" }),
    });
    expect(renew.status).toBe(202);
    const mail = await smtp.waitFor((m) => m.rcptTo.includes("admin@example.com"));
    const { link, base, token } = resetLinkOf(mail);
    expect(base).toBe(server.url);

    const page = await openPage(link);
    await page.screenshot({ path: join(ARTIFACTS, "reset-form.png"), fullPage: true });
    // the page's own checks: two different entries, then a password the policy refuses
    await submit(page, NEW_PASSWORD, `${NEW_PASSWORD}!`);
    await expect.poll(() => result(page).textContent()).toBe("The two passwords differ.");
    await submit(page, "too short");
    await expect.poll(() => result(page).getAttribute("class")).toBe("error");
    await expect.poll(() => result(page).textContent()).toMatch(/15/);

    await submit(page, NEW_PASSWORD);
    // hashing the new password takes seconds on a busy machine, more than poll's default second
    await expect.poll(() => result(page).getAttribute("class"), { timeout: 20_000 }).toBe("ok");
    expect(await result(page).textContent()).toBe(
      "Your password was changed. You can now log in with it; every earlier session has ended.",
    );
    expect(await page.locator("form").isHidden()).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, "reset-success.png"), fullPage: true });
    await page.close();

    const loggedIn = await fetch(`${server.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ userName: "admin", password: NEW_PASSWORD }),
    });
    expect(loggedIn.status).toBe(200);

    const again = await openPage(link);
    await submit(again, "another long passphrase to try 12");
    await expect.poll(() => result(again).getAttribute("class")).toBe("error");
    const failure = await result(again).textContent();
    expect(failure).toContain("cannot be used");
    expect(failure).toMatch(/ask for a new reset e-mail/i);
    await again.screenshot({ path: join(ARTIFACTS, "reset-used.png"), fullPage: true });
    await again.close();

    // the server logged the page's address with the token masked
    expect(server.logs()).toContain("/resetPassword?token=***");
    expect(server.logs()).not.toContain(token);
    // the inline script and style ran under their nonce: no CSP violation, no script error
    expect(consoleLog.filter((line) => /content security policy|violates|refused to|pageerror/i.test(line))).toEqual(
      [],
    );
  });
});
