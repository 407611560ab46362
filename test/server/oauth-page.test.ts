/**
 * The browser authorization page (RFC 5849 section 2.2 for a partner's web application) through
 * inject(): what the page carries, its single-use form tokens, deny, the password check shared
 * with /auth/login (back-off and per-client budget), temporary passwords, dead tokens that never
 * redirect, the typable oob verifier, and the Bearer approval of the CLI beside it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { totpCode } from "../../src/server/services/totp.js";
import {
  authHeader,
  type Credentials,
  createConsumer,
  INJECT_BASE,
  parseFormBody,
  signer,
  type TestConsumer,
} from "../helpers/oauth.js";
import {
  caller,
  insertUser,
  login as loginAs,
  manualClock,
  problemOf,
  type TestAdmin,
  useTestServer,
} from "../helpers/server.js";

const CALLBACK = "https://partner.example/cb";
const FORM = { "content-type": "application/x-www-form-urlencoded" };
const HTML = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" };

describe("the browser authorization page", () => {
  const clock = manualClock();
  const server = useTestServer({ clock: clock.clock });
  let consumer: TestConsumer;
  let member: TestAdmin;
  let newcomer: TestAdmin;

  beforeAll(async () => {
    consumer = await createConsumer(server.app, server.token, { name: "Partner <CRM>", callbackUrls: [CALLBACK] });
    member = await insertUser(server.app, {
      userName: "mia.member",
      password: "a long member passphrase 314",
      roles: ["member"],
    });
    newcomer = await insertUser(server.app, {
      userName: "nils.new",
      password: "a temporary passphrase 2718",
      roles: ["member"],
      temporary: true,
    });
  });

  /**
   * The page's reader is a partner's end user (issue 32): it names no command to run, no API call
   * and no "client", only what they can do and whom to ask.
   */
  function expectWordsForEndUsers(html: string): void {
    const text = html.replace(/<(style|script)[^>]*>[\s\S]*?<\/\1>/g, "").replace(/<title>[^<]*<\/title>/, "");
    expect(text).not.toMatch(/\bbizctl\b|<code>|signed-in client|POST |GET /);
  }

  /** A page that refused to authorize: in end users' words, with no verifier shown or stored. */
  async function expectNoVerifier(html: string, temp: Credentials): Promise<void> {
    expectWordsForEndUsers(html);
    expect(html).not.toMatch(/oauth_verifier|class="verifier"/);
    const row = await server.app.services.store.db
      .selectFrom("oauth_temporary_credentials")
      .select(["authorized_at", "verifier_hash"])
      .where("token", "=", temp.token)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ authorized_at: null, verifier_hash: null });
  }

  const seconds = () => Math.floor(clock.clock().getTime() / 1000);

  function signed(data: Record<string, string>, token?: Credentials): string {
    const oauth = signer(consumer);
    oauth.getTimeStamp = seconds;
    return authHeader(oauth, { method: "POST", url: `${INJECT_BASE}/oAuth`, data }, token);
  }

  async function temporary(callback = CALLBACK): Promise<Credentials> {
    const response = await server.app.inject({
      method: "POST",
      url: "/oAuth",
      headers: { authorization: signed({ oauth_callback: callback }) },
    });
    expect(response.statusCode, response.body).toBe(200);
    const body = parseFormBody(response.body);
    return { token: body.oauth_token!, secret: body.oauth_token_secret! };
  }

  const exchange = (temp: Credentials, verifier: string) =>
    server.app.inject({
      method: "POST",
      url: "/oAuth",
      headers: { authorization: signed({ oauth_verifier: verifier }, temp) },
    });

  const open = (token: string, path = "/oAuth/") =>
    server.app.inject({ method: "GET", url: `${path}?oauth_token=${encodeURIComponent(token)}`, headers: HTML });

  const formTokenOf = (html: string) => /name="csrf_token" value="([0-9a-f]+)"/.exec(html)?.[1] ?? "";

  function submit(fields: Record<string, string>, remoteAddress?: string) {
    return server.app.inject({
      method: "POST",
      url: "/oAuth/",
      headers: FORM,
      payload: new URLSearchParams(fields).toString(),
      ...(remoteAddress && { remoteAddress }),
    });
  }

  /** Opens the page and sends its form with these fields. */
  async function decide(temp: Credentials, fields: Record<string, string>, remoteAddress?: string) {
    const page = await open(temp.token);
    expect(page.statusCode).toBe(200);
    return submit({ oauth_token: temp.token, csrf_token: formTokenOf(page.body), ...fields }, remoteAddress);
  }

  const approveAs = (user: TestAdmin) => ({ userName: user.userName, password: user.password, decision: "approve" });

  it("serves a self-contained page: CSP with a nonce, no framing, no caching, the form a password manager knows", async () => {
    const temp = await temporary(`${CALLBACK}?state=1`);
    const page = await open(temp.token);
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["cache-control"]).toBe("no-store");
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toMatch(/^default-src 'none'; script-src 'none'; style-src 'nonce-[A-Za-z0-9+/=]{24}'; /);
    // the form goes back here, and its redirect only to the callback's origin
    expect(csp).toContain("form-action 'self' https://partner.example;");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = page.body;
    expect(html).not.toMatch(/<script|src=|href="http/i);
    // the consumer's name is escaped, the callback's host shown, what approving grants said
    expect(html).toContain("Partner &lt;CRM&gt;");
    expect(html).toContain("partner.example");
    expect(html).toContain("act as you on this API until you revoke it");
    expectWordsForEndUsers(html);
    expect(html).toMatch(
      /<label for="userName">[^<]+<\/label>\s*<input id="userName" name="userName"[^>]*autocomplete="username"/,
    );
    expect(html).toMatch(
      /<label for="password">[^<]+<\/label>\s*<input id="password" name="password" type="password" autocomplete="current-password"/,
    );
    expect(html).toContain('<button type="submit" name="decision" value="approve">');
    expect(html).toContain('<button type="submit" name="decision" value="deny" formnovalidate>');
    expect(formTokenOf(html)).toHaveLength(64);
  });

  it("approves: 303 to the callback with oauth_token and oauth_verifier after its query; the partner exchanges", async () => {
    const temp = await temporary(`${CALLBACK}?state=a%20b`);
    const response = await decide(temp, approveAs(member));
    expect(response.statusCode, response.body).toBe(303);
    const location = new URL(String(response.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(CALLBACK);
    expect([...location.searchParams.keys()]).toEqual(["state", "oauth_token", "oauth_verifier"]);
    expect(location.searchParams.get("state")).toBe("a b");
    expect(location.searchParams.get("oauth_token")).toBe(temp.token);
    const exchanged = await exchange(temp, location.searchParams.get("oauth_verifier")!);
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    // the approval was the member's
    const access = parseFormBody(exchanged.body);
    const identity = await server.app.inject({
      method: "GET",
      url: "/oAuth",
      headers: {
        authorization: authHeader(
          Object.assign(signer(consumer), { getTimeStamp: seconds }),
          { method: "GET", url: `${INJECT_BASE}/oAuth` },
          { token: access.oauth_token!, secret: access.oauth_token_secret! },
        ),
      },
    });
    expect(identity.json()).toMatchObject({ user: { userName: member.userName } });
  });

  it("denies: 303 with oauth_problem=permission_denied, and the temporary credentials are dead", async () => {
    const temp = await temporary();
    // deny needs no password
    const response = await decide(temp, { decision: "deny" });
    expect(response.statusCode).toBe(303);
    const location = new URL(String(response.headers.location));
    expect(Object.fromEntries(location.searchParams)).toEqual({
      oauth_token: temp.token,
      oauth_problem: "permission_denied",
    });
    expect((await open(temp.token)).statusCode).toBe(400);
    const exchanged = await exchange(temp, "anything");
    problemOf(exchanged, 401, "oauth_token_invalid");
  });

  it("oob: a page with a code easy to type, accepted in any case, with or without its dash", async () => {
    const temp = await temporary("oob");
    const page = await open(temp.token);
    expect(String(page.headers["content-security-policy"])).toContain("form-action 'self';");
    const response = await submit({
      oauth_token: temp.token,
      csrf_token: formTokenOf(page.body),
      ...approveAs(member),
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers.location).toBeUndefined();
    const verifier = /<p class="verifier" id="verifier">([^<]+)<\/p>/.exec(response.body)?.[1] ?? "";
    expect(verifier).toMatch(/^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/);
    const typed = verifier.replace("-", "").toLowerCase();
    const exchanged = await exchange(temp, typed);
    expect(exchanged.statusCode, exchanged.body).toBe(200);
  });

  it("denies oob with a page, never a redirect", async () => {
    const temp = await temporary("oob");
    const response = await decide(temp, { decision: "deny" });
    expect(response.statusCode).toBe(200);
    expect(response.headers.location).toBeUndefined();
    expect(response.body).toContain("Access denied");
  });

  it("shows a wrong password on the page, with a fresh form, and approves nothing", async () => {
    const temp = await temporary();
    const page = await open(temp.token);
    const first = formTokenOf(page.body);
    const response = await submit({ oauth_token: temp.token, csrf_token: first, ...approveAs(member), password: "x" });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('role="alert"');
    expect(response.body).toContain("The user name or password is wrong.");
    expect(response.body).toContain(`value="${member.userName}"`);
    const second = formTokenOf(response.body);
    expect(second).not.toBe(first);
    const row = await server.app.services.store.db
      .selectFrom("oauth_temporary_credentials")
      .select(["authorized_at"])
      .where("token", "=", temp.token)
      .executeTakeFirstOrThrow();
    expect(row.authorized_at).toBeNull();
    // the fresh form works
    const retried = await submit({ oauth_token: temp.token, csrf_token: second, ...approveAs(member) });
    expect(retried.statusCode).toBe(303);
  });

  describe("form tokens: single use, bound to their temporary credentials", () => {
    it.each([
      ["replayed after use", "replay"],
      ["issued for other temporary credentials", "other"],
      ["made up", "made-up"],
      ["missing", "missing"],
    ] as const)("refuses a form token %s (400 page, nothing approved)", async (_name, kind) => {
      const temp = await temporary();
      const page = await open(temp.token);
      let formToken = formTokenOf(page.body);
      if (kind === "replay") {
        await submit({ oauth_token: temp.token, csrf_token: formToken, ...approveAs(member), password: "wrong" });
      } else if (kind === "other") {
        formToken = formTokenOf((await open((await temporary()).token)).body);
      } else if (kind === "made-up") {
        formToken = "0".repeat(64);
      } else {
        formToken = "";
      }
      const response = await submit({ oauth_token: temp.token, csrf_token: formToken, ...approveAs(member) });
      expect(response.statusCode).toBe(400);
      expect(response.headers.location).toBeUndefined();
      expect(response.body).toContain("This form cannot be sent again");
      // a link to a fresh page, relative to this endpoint
      expect(response.body).toContain(`href="./?oauth_token=${temp.token}"`);
      expect((await open(temp.token)).statusCode).toBe(200);
    });
  });

  it("refuses an account with a second factor, which the page does not ask for, and approves nothing", async () => {
    const user = await insertUser(server.app, {
      userName: "tess.totp",
      password: "a second factor passphrase 1618",
      roles: ["member"],
    });
    const call = caller(server.app, (await loginAs(server.app, user.userName, user.password)).token);
    const { secret } = (await call("POST", "/auth/mfa/totp")).json() as { secret: string };
    const code = totpCode(secret, clock.clock().getTime());
    expect((await call("POST", "/auth/mfa/totp/verify", { code })).statusCode).toBe(200);
    const temp = await temporary();
    const response = await decide(temp, approveAs(user));
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain("Your account is protected by a second factor");
    await expectNoVerifier(response.body, temp);
  });

  it("tells a user with a temporary password to change it first, and issues no verifier", async () => {
    const temp = await temporary();
    const response = await decide(temp, approveAs(newcomer));
    expect(response.statusCode).toBe(403);
    expect(response.headers.location).toBeUndefined();
    expect(response.body).toContain("Change your password first");
    await expectNoVerifier(response.body, temp);
  });

  it("counts wrong passwords towards the account's back-off, exactly like /auth/login", async () => {
    const victim = await insertUser(server.app, {
      userName: "vera.victim",
      password: "a long victim passphrase 161",
      roles: ["member"],
    });
    // five failures: two through /auth/login, three on the page
    for (let i = 0; i < 2; i++) {
      const failed = await server.app.inject({
        method: "POST",
        url: "/auth/login",
        payload: { userName: victim.userName, password: "wrong" },
      });
      problemOf(failed, 401, "invalid_credentials");
    }
    const temp = await temporary();
    for (let i = 0; i < 3; i++) {
      const response = await decide(temp, { ...approveAs(victim), password: "wrong" });
      expect(response.body).toContain("The user name or password is wrong.");
    }
    const locked = await server.app.inject({
      method: "POST",
      url: "/auth/login",
      payload: { userName: victim.userName, password: victim.password },
    });
    problemOf(locked, 429, "account_locked");
    // the page says so too, with the right password, and a Retry-After
    const onPage = await decide(temp, approveAs(victim));
    expect(onPage.statusCode).toBe(429);
    expect(Number(onPage.headers["retry-after"])).toBeGreaterThan(0);
    expect(onPage.body).toContain("Too many failed logins");
  });

  it.each([
    ["an unknown token", async () => "0123456789abcdef"],
    [
      "an approved token",
      async () => {
        const temp = await temporary();
        await decide(temp, approveAs(member));
        return temp.token;
      },
    ],
  ])("answers a page (400, no redirect) for %s, on GET and on POST", async (_name, tokenOf) => {
    const token = await tokenOf();
    const page = await open(token);
    expect(page.statusCode).toBe(400);
    expect(page.headers.location).toBeUndefined();
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.body).toContain("This authorization link cannot be used");
    const posted = await submit({ oauth_token: token, csrf_token: "0".repeat(64), decision: "approve" });
    expect(posted.statusCode).toBe(400);
    expect(posted.headers.location).toBeUndefined();
  });

  it("keeps the Bearer approval of the CLI, and a non-browser request without one is still 401", async () => {
    const temp = await temporary("oob");
    const bearer = (await loginAs(server.app, member.userName, member.password)).token;
    const approval = await server.app.inject({
      method: "GET",
      url: `/oAuth?oauth_token=${temp.token}`,
      headers: { ...HTML, authorization: `Bearer ${bearer}` },
    });
    expect(approval.statusCode).toBe(200);
    expect(approval.json()).toMatchObject({ oauth_token: temp.token });
    const other = await temporary();
    const bare = await server.app.inject({ method: "GET", url: `/oAuth?oauth_token=${other.token}` });
    problemOf(bare, 401, "token_missing");
  });

  it("answers an expired token with a page (400), never a redirect", async () => {
    const temp = await temporary();
    const page = await open(temp.token);
    clock.advance(11 * 60_000);
    const reopened = await open(temp.token);
    expect(reopened.statusCode).toBe(400);
    expect(reopened.body).toContain("has expired");
    const posted = await submit({ oauth_token: temp.token, csrf_token: formTokenOf(page.body), ...approveAs(member) });
    expect(posted.statusCode).toBe(400);
    expect(posted.headers.location).toBeUndefined();
  });
});

describe("the page spends the per-client budget of /auth/login", () => {
  const server = useTestServer({ loginRateLimit: { max: 3, timeWindowMs: 60_000 } });
  let consumer: TestConsumer;
  beforeAll(async () => {
    consumer = await createConsumer(server.app, server.token, { callbackUrls: [CALLBACK] });
  });

  it("refuses a sign-in on the page (429 page) once /auth/login spent the budget, and the other way round", async () => {
    const from = "203.0.113.7";
    const oauth = signer(consumer);
    const issued = await server.app.inject({
      method: "POST",
      url: "/oAuth",
      headers: {
        authorization: authHeader(oauth, {
          method: "POST",
          url: `${INJECT_BASE}/oAuth`,
          data: { oauth_callback: "oob" },
        }),
      },
    });
    const token = parseFormBody(issued.body).oauth_token!;
    const loginFrom = () =>
      server.app.inject({
        method: "POST",
        url: "/auth/login",
        remoteAddress: from,
        payload: { userName: "nobody", password: "wrong" },
      });
    const signIn = async () => {
      const page = await server.app.inject({ method: "GET", url: `/oAuth/?oauth_token=${token}`, headers: HTML });
      const formToken = /name="csrf_token" value="([0-9a-f]+)"/.exec(page.body)![1]!;
      return server.app.inject({
        method: "POST",
        url: "/oAuth/",
        headers: FORM,
        remoteAddress: from,
        payload: new URLSearchParams({
          oauth_token: token,
          csrf_token: formToken,
          userName: "nobody",
          password: "wrong",
          decision: "approve",
        }).toString(),
      });
    };
    problemOf(await loginFrom(), 401, "invalid_credentials");
    problemOf(await loginFrom(), 401, "invalid_credentials");
    expect((await signIn()).statusCode).toBe(200);
    const limited = await signIn();
    expect(limited.statusCode).toBe(429);
    expect(limited.body).toMatch(/Too many sign-in attempts from this address; try again in \d+ seconds/);
    problemOf(await loginFrom(), 429, "rate_limited");
    // opening the page and denying spend nothing
    const page = await server.app.inject({ method: "GET", url: `/oAuth/?oauth_token=${token}`, headers: HTML });
    expect(page.statusCode).toBe(200);
  });
});
