/**
 * Debian's chromium driven by playwright-core, launched the same way by every browser test.
 * CI installs it (.ci/run); a missing browser is a failure, never a silent skip.
 */
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { ROOT } from "./cli.js";

/** Where the browser tests put their screenshots. */
export const ARTIFACTS = join(ROOT, "test-artifacts");

const CHROMIUM = "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run this test`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export interface Chromium {
  browser: Browser;
  /** a new page whose console messages and errors are kept for problems() */
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  /** a full-page screenshot, test-artifacts/NAME.png */
  shot(page: Page, name: string): Promise<unknown>;
  /** what the pages of newPage() logged of a CSP violation or a script error */
  problems(): string[];
}

/** launchChromium() in a beforeAll of the describe block it is called in, closed in its afterAll. */
export function useChromium(): Chromium {
  /** every console message and page error of every page of newPage() */
  const consoleLog: string[] = [];
  const fixture: Chromium = {
    browser: undefined as unknown as Browser,
    newPage: async (viewport) => {
      const page = await fixture.browser.newPage(viewport && { viewport });
      page.on("console", (message) => consoleLog.push(`${message.type()}: ${message.text()}`));
      page.on("pageerror", (error) => consoleLog.push(`pageerror: ${error.message}`));
      return page;
    },
    shot: (page, name) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true }),
    problems: () => consoleLog.filter((line) => /content security policy|violates|refused to|pageerror/i.test(line)),
  };
  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    fixture.browser = await launchChromium();
  });
  afterAll(async () => {
    await fixture.browser?.close();
  });
  return fixture;
}
