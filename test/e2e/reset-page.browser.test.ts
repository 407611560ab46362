/**
 * The reset page in a real browser: Debian's chromium (`apt-get install -y chromium`) driven by
 * playwright-core, against a real `server start` that mails through a real SMTP server.
 * Needs `npm run build` first. Run it alone with `npx vitest run test/e2e/reset-page.browser.test.ts`
 * (or `npx vitest run browser`). Screenshots go to test-artifacts/ (reset-form, reset-success, reset-used).
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useChromium } from "../helpers/browser.js";
import { useServer } from "../helpers/cli.js";
import { resetLinkOf, useSmtpSink } from "../helpers/mail.js";

const NEW_PASSWORD = "purple elephants dance at midnight 7";

describe("the reset page in a real browser (chromium)", () => {
  const smtp = useSmtpSink();
  // no --public-url: links are built from the address the server listens on
  const s = useServer({
    login: false,
    initArgs: ["--admin-email", "admin@example.com"],
    serverArgs: () => ["--smtp-url", smtp.url],
  });
  const chromium = useChromium();

  async function openPage(link: string): Promise<Page> {
    const page = await chromium.newPage({ width: 800, height: 600 });
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
    const renew = await fetch(`${s.server.url}/renewPassword`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ userName: "admin" }),
    });
    expect(renew.status).toBe(202);
    const mail = await smtp.waitFor((m) => m.rcptTo.includes("admin@example.com"));
    const { link, base, token } = resetLinkOf(mail);
    expect(base).toBe(s.server.url);

    const page = await openPage(link);
    await chromium.shot(page, "reset-form");
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
    await chromium.shot(page, "reset-success");
    await page.close();

    const loggedIn = await fetch(`${s.server.url}/auth/login`, {
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
    await chromium.shot(again, "reset-used");
    await again.close();

    // the server logged the page's address with the token masked
    expect(s.server.logs()).toContain("/resetPassword?token=***");
    expect(s.server.logs()).not.toContain(token);
    // the inline script and style ran under their nonce: no CSP violation, no script error
    expect(chromium.problems()).toEqual([]);
  });
});
