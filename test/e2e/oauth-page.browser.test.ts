/**
 * The OAuth authorization page in a real browser: Debian's chromium driven by playwright-core,
 * against a real `server start`. A partner web application (this test: an HTTP server on a local
 * port for its callback, signing with the independent oauth-1.0a package) gets temporary
 * credentials and sends the browser to the page; the user signs in and approves (or denies);
 * the browser lands on the partner's callback, and the partner exchanges the verifier and reads
 * the events as the user. Needs `npm run build` first. Screenshots go to test-artifacts/
 * (oauth-login, oauth-wrong-password, oauth-oob, oauth-denied-oob, oauth-error-*, oauth-password-change).
 */
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useChromium } from "../helpers/browser.js";
import { apiToken, PASSWORD, useServer } from "../helpers/cli.js";
import { authHeader, type Credentials, parseFormBody, signer } from "../helpers/oauth.js";

const MEMBER = { userName: "mia.member", password: "a long member passphrase 314" };
const NEWCOMER = { userName: "nils.new", password: "a temporary passphrase 2718" };

/** The partner's web application: its callback records what arrives; /frame embeds a page. */
interface Partner {
  origin: string;
  callbacks: URL[];
  frameOf(url: string): void;
  close(): Promise<void>;
}

async function startPartner(): Promise<Partner> {
  const callbacks: URL[] = [];
  let framed = "about:blank";
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://partner");
    if (url.pathname === "/frame") {
      response.writeHead(200, { "content-type": "text/html" });
      response.end(`<!doctype html><title>Partner frame</title><iframe id="f" src="${framed}"></iframe>`);
      return;
    }
    // the browser also asks for /favicon.ico: only the callback counts
    if (url.pathname === "/cb") callbacks.push(url);
    response.writeHead(200, { "content-type": "text/html" });
    response.end("<!doctype html><title>Partner callback</title><p>Back at the partner.</p>");
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  return {
    origin: `http://127.0.0.1:${port}`,
    callbacks,
    frameOf: (url) => {
      framed = url;
    },
    close: () => new Promise((done) => server.close(() => done())),
  };
}

describe("the OAuth authorization page in a real browser (chromium)", () => {
  const s = useServer({ login: false });
  const chromium = useChromium();
  let partner: Partner;
  let consumer: { key: string; secret: string };

  async function api(method: string, path: string, body?: unknown, bearer?: string): Promise<Response> {
    return fetch(`${s.server.url}${path}`, {
      method,
      headers: {
        ...(body !== undefined && { "content-type": "application/json" }),
        ...(bearer && { authorization: `Bearer ${bearer}` }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  }

  const loginToken = (userName: string, password: string) => apiToken(s.server, userName, password);

  beforeAll(async () => {
    partner = await startPartner();
    const admin = await loginToken("admin", PASSWORD);
    const created = await api(
      "POST",
      "/Resources",
      { resourceType: "OAuthConsumer", name: "Partner CRM", callbackUrls: [`${partner.origin}/cb`] },
      admin,
    );
    expect(created.status).toBe(201);
    const body = (await created.json()) as { consumerKey: string; consumerSecret: string };
    consumer = { key: body.consumerKey, secret: body.consumerSecret };
    // users an admin creates have a temporary password; the member changes it, the newcomer not yet
    for (const user of [MEMBER, NEWCOMER]) {
      const made = await api(
        "POST",
        "/Resources",
        { resourceType: "User", userName: user.userName, password: user.password, roles: [{ value: "member" }] },
        admin,
      );
      expect(made.status).toBe(201);
    }
    const first = await loginToken(MEMBER.userName, MEMBER.password);
    MEMBER.password = "the member's own passphrase 1618";
    const changed = await api(
      "POST",
      "/auth/ChangePassWithLastPass",
      { lastPassword: "a long member passphrase 314", newPassword: MEMBER.password },
      first,
    );
    expect(changed.status).toBe(204);
    const event = await api(
      "POST",
      "/api/crm/v1/events/",
      { code: "WEB-1", name: "Webinar", type: "webinar", startsAt: "2027-04-01T10:00:00Z" },
      admin,
    );
    expect(event.status).toBe(201);
  });
  afterAll(async () => {
    await partner?.close();
  });

  // ------------------------------------------------------------------------------------------
  // the partner's side: signed requests with oauth-1.0a over real HTTP

  async function signedPost(data: Record<string, string>, token?: Credentials): Promise<Response> {
    const url = `${s.server.url}/oAuth`;
    return fetch(url, {
      method: "POST",
      headers: { authorization: authHeader(signer(consumer), { method: "POST", url, data }, token) },
    });
  }

  async function temporary(callback = `${partner.origin}/cb?state=xyz`): Promise<Credentials> {
    const response = await signedPost({ oauth_callback: callback });
    expect(response.status).toBe(200);
    const body = parseFormBody(await response.text());
    return { token: body.oauth_token!, secret: body.oauth_token_secret! };
  }

  async function exchange(temp: Credentials, verifier: string): Promise<Credentials> {
    const response = await signedPost({ oauth_verifier: verifier }, temp);
    expect(response.status).toBe(200);
    const body = parseFormBody(await response.text());
    return { token: body.oauth_token!, secret: body.oauth_token_secret! };
  }

  async function eventsAs(access: Credentials): Promise<Response> {
    const url = `${s.server.url}/api/crm/v1/events`;
    return fetch(url, { headers: { authorization: authHeader(signer(consumer), { method: "GET", url }, access) } });
  }

  // ------------------------------------------------------------------------------------------
  // the user's side: the browser

  const authorizeUrl = (temp: Credentials) => `${s.server.url}/oAuth/?oauth_token=${temp.token}`;

  async function openPage(temp: Credentials, status = 200): Promise<Page> {
    const page = await chromium.newPage({ width: 800, height: 640 });
    const response = await page.goto(authorizeUrl(temp));
    expect(response?.status()).toBe(status);
    return page;
  }

  async function signIn(page: Page, user: { userName: string; password: string }, decision = /approve/i) {
    // found by their labels, as a screen reader (and a password manager) would
    await page.getByLabel("User name").fill(user.userName);
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: decision }).click();
  }

  const shot = chromium.shot;

  it("signs in, approves, lands on the callback with a verifier; the partner reads the events as the user", async () => {
    const temp = await temporary();
    const page = await openPage(temp);
    await expect.poll(() => page.title()).toBe("Authorize Partner CRM · bizctl");
    expect(await page.locator(".app").textContent()).toContain("Partner CRM asks to act as you on this API");
    await shot(page, "oauth-login");
    await signIn(page, MEMBER);
    await page.waitForURL(`${partner.origin}/cb?**`);
    const landed = new URL(page.url());
    expect(landed.searchParams.get("state")).toBe("xyz");
    expect(landed.searchParams.get("oauth_token")).toBe(temp.token);
    const verifier = landed.searchParams.get("oauth_verifier")!;
    expect(verifier).toMatch(/^[0-9a-f]{32}$/);
    expect(partner.callbacks.at(-1)?.searchParams.get("oauth_verifier")).toBe(verifier);
    await page.close();

    const access = await exchange(temp, verifier);
    const events = await eventsAs(access);
    expect(events.status).toBe(200);
    expect(((await events.json()) as { data: { code: string }[] }).data.map((e) => e.code)).toEqual(["WEB-1"]);
    const identity = await fetch(`${s.server.url}/oAuth`, {
      headers: { authorization: authHeader(signer(consumer), { method: "GET", url: `${s.server.url}/oAuth` }, access) },
    });
    expect(await identity.json()).toMatchObject({ user: { userName: MEMBER.userName } });
  });

  /** The audit trail's records of a denied grant, as an admin reads them. */
  async function denials(): Promise<{ outcome: string; actor?: unknown; target?: { type: string; name?: string } }[]> {
    const admin = await loginToken("admin", PASSWORD);
    const filter = encodeURIComponent('action eq "oauth.grant.deny"');
    const response = await api("GET", `/audit?filter=${filter}`, undefined, admin);
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: Awaited<ReturnType<typeof denials>> }).data;
  }

  it("denies: the callback gets oauth_problem=permission_denied and the temporary credentials are dead", async () => {
    const temp = await temporary();
    const page = await openPage(temp);
    const denialsBefore = (await denials()).length;
    await page.getByRole("button", { name: "Deny" }).click();
    await page.waitForURL(`${partner.origin}/cb?**`);
    const landed = new URL(page.url());
    expect(landed.searchParams.get("oauth_problem")).toBe("permission_denied");
    expect(landed.searchParams.get("oauth_token")).toBe(temp.token);
    expect(landed.searchParams.has("oauth_verifier")).toBe(false);
    await page.close();
    const refused = await signedPost({ oauth_verifier: "guess" }, temp);
    expect(refused.status).toBe(401);
    // one record of the denial, naming the consumer; nobody signs in to deny, so it has no actor
    const recorded = await denials();
    expect(recorded).toHaveLength(denialsBefore + 1);
    expect(recorded[0]).toMatchObject({ outcome: "success", target: { type: "OAuthConsumer", name: "Partner CRM" } });
    expect(recorded[0]!.actor).toBeUndefined();
  });

  it("shows a wrong password on the page; then the right one approves", async () => {
    const temp = await temporary();
    const page = await openPage(temp);
    await signIn(page, { ...MEMBER, password: "not the password at all" });
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("The user name or password is wrong.");
    // the user name stays, for a second try
    expect(await page.getByLabel("User name").inputValue()).toBe(MEMBER.userName);
    await shot(page, "oauth-wrong-password");
    await page.getByLabel("Password").fill(MEMBER.password);
    await page.getByRole("button", { name: /approve/i }).click();
    await page.waitForURL(`${partner.origin}/cb?**`);
    expect(new URL(page.url()).searchParams.get("oauth_verifier")).toBeTruthy();
    await page.close();
  });

  it("refuses a replayed form token with a page, and approves nothing", async () => {
    const temp = await temporary();
    const page = await openPage(temp);
    const spent = await page.locator("input[name=csrf_token]").inputValue();
    await signIn(page, { ...MEMBER, password: "wrong once" });
    await expect.poll(() => page.getByRole("alert").isVisible()).toBe(true);
    // the fresh form, sent back with the spent token (as a replaying attacker would)
    await page.locator("input[name=csrf_token]").evaluate((input, value) => {
      (input as unknown as { value: string }).value = value;
    }, spent);
    const answered = page.waitForResponse((r) => r.request().method() === "POST");
    await signIn(page, MEMBER);
    expect((await answered).status()).toBe(400);
    await expect.poll(() => page.locator("h1").textContent()).toBe("This form cannot be sent again");
    expect(page.url().startsWith(s.server.url)).toBe(true);
    await shot(page, "oauth-error-replayed-form");
    await page.close();
  });

  it("oob: shows a code easy to type, which the partner exchanges as typed", async () => {
    const temp = await temporary("oob");
    const page = await openPage(temp);
    expect(await page.locator(".hint").textContent()).toContain("shows you a code");
    await signIn(page, MEMBER);
    await expect.poll(() => page.locator("#verifier").isVisible()).toBe(true);
    const code = (await page.locator("#verifier").textContent()) ?? "";
    expect(code).toMatch(/^[0-9A-Z]{5}-[0-9A-Z]{5}$/);
    await shot(page, "oauth-oob");
    await page.close();
    const access = await exchange(temp, code.toLowerCase().replace("-", " "));
    expect((await eventsAs(access)).status).toBe(200);
  });

  it("tells a user with a temporary password to change it first", async () => {
    const temp = await temporary();
    const page = await openPage(temp);
    await signIn(page, NEWCOMER);
    await expect.poll(() => page.locator("h1").textContent()).toBe("Change your password first");
    await shot(page, "oauth-password-change");
    expect(page.url().startsWith(s.server.url)).toBe(true);
    await page.close();
  });

  it("refuses temporary credentials for a callback that is not registered (400 oauth_callback_rejected)", async () => {
    for (const callback of [`${partner.origin}/elsewhere`, "http://127.0.0.1:1/cb", `${partner.origin}/cb/..%2Fx`]) {
      const response = await signedPost({ oauth_callback: callback });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { code: string }).code).toBe("oauth_callback_rejected");
    }
  });

  it("answers an expired temporary token with a page (400), never a redirect", async () => {
    const temp = await temporary();
    const db = new Database(join(s.sandbox.dataDir, "bizctl.db"));
    try {
      db.prepare("update oauth_temporary_credentials set expires_at = ? where token = ?").run(
        new Date(Date.now() - 1000).toISOString(),
        temp.token,
      );
    } finally {
      db.close();
    }
    const page = await openPage(temp, 400);
    expect(await page.locator("h1").textContent()).toBe("This authorization link cannot be used");
    expect(page.url().startsWith(s.server.url)).toBe(true);
    await shot(page, "oauth-error-expired");
    await page.close();
  });

  it("refuses to be shown inside a frame (CSP frame-ancestors 'none')", async () => {
    const temp = await temporary();
    partner.frameOf(authorizeUrl(temp));
    // not a page of chromium.newPage(): the violation it provokes is the point here
    const page = await chromium.browser.newPage();
    const messages: string[] = [];
    page.on("console", (message) => messages.push(message.text()));
    await page.goto(`${partner.origin}/frame`);
    await expect.poll(() => messages.join("\n")).toMatch(/frame-ancestors 'none'/);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(await frame?.locator("input[name=password]").count()).toBe(0);
    await page.close();
  });

  it("ran without a CSP violation or a script error on its own pages", () => {
    expect(chromium.problems()).toEqual([]);
  });
});
