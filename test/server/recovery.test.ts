/**
 * Password recovery through the full HTTP pipeline (inject): POST /renewPassword, PUT and GET
 * /resetPassword, the e-mails the outbox mailer writes, login backoff and unlock, rate limits.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { htmlLinksOf, outboxReader, type ParsedMail, recipientsOf, resetLinkOf } from "../helpers/mail.js";
import {
  bearer,
  createResource,
  insertUser,
  loggedIn,
  loginToken,
  manualClock,
  problemOf,
  useTestServer,
} from "../helpers/server.js";

const PUBLIC_URL = "https://bizctl.example.test/base";
const TEMPORARY = "temporary passphrase for a new hire 1";
const NEW_PASSWORD = "purple elephants dance at midnight 7";
const OTHER_PASSWORD = "seven quiet otters paddle upstream";
const WRONG_PASSWORD = "definitely not the right one 99";

interface Employee {
  id: string;
  userName: string;
  email: string;
}

describe("password recovery (inject, outbox mailer)", () => {
  const clock = manualClock(new Date("2027-04-01T08:00:00Z"));
  const server = useTestServer({
    publicUrl: `${PUBLIC_URL}/`,
    clock: clock.clock,
    // this file logs in and asks for links far more often than a person would
    loginRateLimit: { max: 10_000, timeWindowMs: 60_000 },
  });
  const admin = server.call;
  const anonymous = server.anonymous;
  let outbox: ReturnType<typeof outboxReader>;

  /** A User with an e-mail address and a temporary password (firstLogin true), created by the admin. */
  async function employee(userName: string): Promise<Employee> {
    const email = `${userName.toLowerCase()}@example.com`;
    const user = await createResource(admin, {
      resourceType: "User",
      userName,
      emails: [{ value: email, type: "work", primary: true }],
      roles: [{ value: "member" }],
      password: TEMPORARY,
    });
    return { id: String(user.id), userName, email };
  }

  /** The e-mails written since the last call, after the background deliveries have finished. */
  async function mail(): Promise<ParsedMail[]> {
    await server.app.services.mailer.idle();
    return outbox.take();
  }

  /** Asks for a reset link for this employee and returns its token (exactly one e-mail, to them). */
  async function resetTokenFor(who: Employee): Promise<string> {
    const response = await anonymous("POST", "/renewPassword", { userName: who.userName });
    expect(response.statusCode).toBe(202);
    const sent = await mail();
    expect(sent.map(recipientsOf)).toEqual([[who.email]]);
    return resetLinkOf(sent[0]!).token;
  }

  const login = (userName: string, password: string) => anonymous("POST", "/auth/login", { userName, password });

  // each test sees only its own e-mails
  beforeEach(async () => {
    await mail();
  });

  beforeAll(async () => {
    outbox = outboxReader(server.dataDir);
  });

  describe("POST /renewPassword", () => {
    it("by userName: 202, and one e-mail with a text and an HTML part linking to {publicUrl}/resetPassword", async () => {
      const jdoe = await employee("jdoe");
      const response = await anonymous(
        "POST",
        "/renewPassword",
        { userName: "jdoe" },
        // a forged Host must not make its way into the link
        { host: "evil.example.net", "x-forwarded-host": "evil.example.net", "x-forwarded-proto": "http" },
      );
      expect(response.statusCode).toBe(202);
      expect(response.headers["content-type"]).toMatch(/^application\/json/);
      expect(response.json()).toEqual({ status: "accepted", detail: expect.any(String) });

      const sent = await mail();
      expect(sent).toHaveLength(1);
      const message = sent[0]!;
      expect(recipientsOf(message)).toEqual([jdoe.email]);
      expect(message.subject).toMatch(/reset/i);
      expect(message.text).toBeTruthy();
      expect(typeof message.html).toBe("string");
      const { link, base, token } = resetLinkOf(message);
      expect(base).toBe(PUBLIC_URL);
      expect(link).toBe(`${PUBLIC_URL}/resetPassword?token=${token}`);
      // >= 128 bits of randomness: at least 22 base64url characters
      expect(token.length).toBeGreaterThanOrEqual(22);
      expect(htmlLinksOf(message)).toEqual([link]);
      for (const part of [message.text ?? "", String(message.html)]) expect(part).not.toContain("evil.example.net");
      expect(message.text).toContain("jdoe");

      // the token is stored only as a hash
      const rows = await server.app.services.store.db.selectFrom("password_resets").selectAll().execute();
      expect(JSON.stringify(rows)).not.toContain(token);
    });

    it("by email (on the alias /auth/renewPassword): 202 and one e-mail with the link", async () => {
      const kim = await employee("kim.lee");
      const response = await anonymous("POST", "/auth/renewPassword", { email: kim.email });
      expect(response.statusCode).toBe(202);
      const sent = await mail();
      expect(sent.map(recipientsOf)).toEqual([[kim.email]]);
      const { link, token } = resetLinkOf(sent[0]!);
      expect(link).toBe(`${PUBLIC_URL}/resetPassword?token=${token}`);
      expect(htmlLinksOf(sent[0]!)).toEqual([link]);
    });

    it("answers an existing and a non-existing account byte for byte alike (apart from the request id)", async () => {
      const known = await employee("known.one");
      const pairs: [object, object][] = [
        [{ userName: known.userName }, { userName: "no.such.user" }],
        [{ email: known.email }, { email: "no.such.user@example.com" }],
      ];
      for (const [existing, missing] of pairs) {
        const a = await anonymous("POST", "/renewPassword", existing);
        const b = await anonymous("POST", "/renewPassword", missing);
        expect(a.statusCode).toBe(202);
        expect(b.statusCode).toBe(202);
        const idA = String(a.headers["x-request-id"]);
        const idB = String(b.headers["x-request-id"]);
        expect(idA).not.toBe(idB);
        expect(a.body.replaceAll(idA, "")).toBe(b.body.replaceAll(idB, ""));
        expect(a.headers["content-type"]).toBe(b.headers["content-type"]);
        expect(a.headers["content-length"]).toBe(b.headers["content-length"]);
      }
      // only the existing account got mail
      const sent = await mail();
      expect(sent.map(recipientsOf)).toEqual([[known.email], [known.email]]);
    });

    it.each([
      { asked: "an existing userName", body: (e: Employee) => ({ userName: e.userName }), mails: 1 },
      { asked: "an unknown userName", body: () => ({ userName: "nobody.here" }), mails: 0 },
      { asked: "an existing email", body: (e: Employee) => ({ email: e.email }), mails: 1 },
      { asked: "an unknown email", body: () => ({ email: "nobody.here@example.com" }), mails: 0 },
    ])(
      "for $asked the request only queues one job, the same row; the sender then resolves it",
      async ({ body, mails }) => {
        const who = await employee(`queued.${crypto.randomUUID().slice(0, 8)}`);
        const { db } = server.app.services.store;
        const resets = async () => (await db.selectFrom("password_resets").select("token_hash").execute()).length;
        const resetsBefore = await resets();
        const queueBefore = await db.selectFrom("mail_queue").select("id").execute();

        expect((await anonymous("POST", "/renewPassword", body(who))).statusCode).toBe(202);
        // on the request path: one job row, whatever the account; no look-up result, no token, no mail
        const queued = await db
          .selectFrom("mail_queue")
          .selectAll()
          .where(
            "id",
            "not in",
            queueBefore.map((r) => r.id),
          )
          .execute();
        expect(queued).toEqual([
          expect.objectContaining({ kind: "password_reset", recipient: "", status: "queued", attempts: 0 }),
        ]);
        // what was asked, and where from (for the audit record the sender writes): the same shape for every account
        const { origin, ...asked } = JSON.parse(queued[0]!.body_text!) as { origin: Record<string, unknown> };
        expect(asked).toEqual(body(who));
        expect(Object.keys(origin).sort()).toEqual(["ip", "requestId", "userAgent"].filter((key) => key in origin));
        expect(origin.requestId).toEqual(expect.any(String));
        expect(await resets()).toBe(resetsBefore);

        const sent = await mail();
        expect(sent.map(recipientsOf)).toEqual(mails ? [[who.email]] : []);
        expect(await resets()).toBe(resetsBefore + mails);
        // the job is gone with the work it did
        expect(await db.selectFrom("mail_queue").select("id").where("id", "=", queued[0]!.id).execute()).toEqual([]);
      },
    );

    it("refuses neither or both of userName and email with 400 validation_failed", async () => {
      for (const body of [{}, { userName: "jdoe", email: "jdoe@example.com" }]) {
        const response = await anonymous("POST", "/renewPassword", body);
        problemOf(response, 400, "validation_failed");
      }
      problemOf(await anonymous("POST", "/renewPassword", { userName: "jdoe", admin: true }), 400, "validation_failed");
      expect(await mail()).toEqual([]);
    });
  });

  describe("PUT /resetPassword", () => {
    it("sets the password, clears firstLogin and the lockout, ends every session and sends a notice", async () => {
      const ann = await employee("ann.smith");
      // a session from before the reset (firstLogin: the temporary password)
      const before = await login(ann.userName, TEMPORARY);
      expect(before.statusCode).toBe(200);
      expect(before.json().firstLogin).toBe(true);
      const oldToken = before.json().token as string;
      // lock the account: 5 wrong passwords, then even the right one is refused for a while
      for (let i = 0; i < 5; i++) problemOf(await login(ann.userName, WRONG_PASSWORD), 401, "invalid_credentials");
      const locked = await login(ann.userName, TEMPORARY);
      problemOf(locked, 429, "account_locked");
      expect(Number(locked.headers["retry-after"])).toBeGreaterThan(0);

      const token = await resetTokenFor(ann);
      const reset = await anonymous("PUT", "/resetPassword", { token, newPassword: NEW_PASSWORD });
      expect(reset.statusCode).toBe(204);
      // a completed reset does not log the user in
      expect(reset.body).toBe("");

      problemOf(await login(ann.userName, TEMPORARY), 401, "invalid_credentials");
      const after = await login(ann.userName, NEW_PASSWORD);
      expect(after.statusCode).toBe(200);
      expect(after.json().firstLogin).toBe(false);
      const revoked = await server.app.inject({ method: "GET", url: "/auth/isLogged", headers: bearer(oldToken) });
      problemOf(revoked, 401, "token_revoked");
      const fresh = await server.app.inject({
        method: "GET",
        url: "/auth/isLogged",
        headers: bearer(after.json().token),
      });
      expect(fresh.statusCode).toBe(200);
      const status = await admin("GET", `/auth/isFirstLogin/${ann.id}`);
      expect(status.json()).toEqual({ employeeId: ann.id, firstLogin: false });

      const notice = await mail();
      expect(notice.map(recipientsOf)).toEqual([[ann.email]]);
      expect(notice[0]!.subject).toMatch(/password was changed/i);
      expect(notice[0]!.text).not.toContain("resetPassword?token=");
      expect(notice[0]!.text).not.toContain(token);
    });

    it("refuses a token used once already with 400 invalid_reset_token", async () => {
      const bo = await employee("bo.berg");
      const token = await resetTokenFor(bo);
      expect((await anonymous("PUT", "/resetPassword", { token, newPassword: NEW_PASSWORD })).statusCode).toBe(204);
      const again = await anonymous("PUT", "/resetPassword", { token, newPassword: OTHER_PASSWORD });
      const problem = problemOf(again, 400, "invalid_reset_token");
      expect(problem.errors).toContainEqual(expect.objectContaining({ path: "/token" }));
      // the second attempt changed nothing
      expect((await login(bo.userName, NEW_PASSWORD)).statusCode).toBe(200);
      problemOf(await login(bo.userName, OTHER_PASSWORD), 401, "invalid_credentials");
    });

    it("a completed reset voids the user's other outstanding links", async () => {
      const cy = await employee("cy.twombly");
      const first = await resetTokenFor(cy);
      const second = await resetTokenFor(cy);
      expect(first).not.toBe(second);
      expect((await anonymous("PUT", "/resetPassword", { token: second, newPassword: NEW_PASSWORD })).statusCode).toBe(
        204,
      );
      problemOf(
        await anonymous("PUT", "/resetPassword", { token: first, newPassword: OTHER_PASSWORD }),
        400,
        "invalid_reset_token",
      );
      await mail();
    });

    it("refuses an expired token (31 minutes later) and a truncated or unknown one alike", async () => {
      const dee = await employee("dee.dee");
      const token = await resetTokenFor(dee);
      const bodies: string[] = [];
      for (const bad of [token.slice(0, -1), `${token}A`, "x", "A".repeat(43)]) {
        const response = await anonymous("PUT", "/resetPassword", { token: bad, newPassword: NEW_PASSWORD });
        const problem = problemOf(response, 400, "invalid_reset_token");
        bodies.push(response.body.replace(problem.requestId ?? "", ""));
      }
      clock.advance(31 * 60 * 1000);
      const expired = await anonymous("PUT", "/resetPassword", { token, newPassword: NEW_PASSWORD });
      const problem = problemOf(expired, 400, "invalid_reset_token");
      bodies.push(expired.body.replace(problem.requestId ?? "", ""));
      // unknown, used and expired look the same
      expect(new Set(bodies).size).toBe(1);
      // nothing changed
      expect((await login(dee.userName, TEMPORARY)).statusCode).toBe(200);
      expect(await mail()).toEqual([]);
    });

    it("refuses a weak password with 400 weak_password and leaves the token usable", async () => {
      const eve = await employee("eve.online");
      const token = await resetTokenFor(eve);
      for (const weak of ["short", "1qaz2wsx3edc4rfv", `${eve.userName} is my name forever`, TEMPORARY]) {
        const response = await anonymous("PUT", "/resetPassword", { token, newPassword: weak });
        expect(problemOf(response, 400, "weak_password").detail).toBeTruthy();
      }
      expect((await login(eve.userName, TEMPORARY)).statusCode).toBe(200);
      expect((await anonymous("PUT", "/resetPassword", { token, newPassword: NEW_PASSWORD })).statusCode).toBe(204);
      expect((await login(eve.userName, NEW_PASSWORD)).statusCode).toBe(200);
      await mail();
    });

    it("a token resets only the user it was sent to", async () => {
      const fay = await employee("fay.wray");
      const gus = await employee("gus.grissom");
      const fayToken = await resetTokenFor(fay);
      const gusToken = await resetTokenFor(gus);
      const gusSession = await loginToken(server.app, gus.userName, TEMPORARY);
      expect(
        (await anonymous("PUT", "/resetPassword", { token: fayToken, newPassword: NEW_PASSWORD })).statusCode,
      ).toBe(204);
      expect((await login(fay.userName, NEW_PASSWORD)).statusCode).toBe(200);
      // gus: old password, session and link untouched
      problemOf(await login(gus.userName, NEW_PASSWORD), 401, "invalid_credentials");
      expect((await login(gus.userName, TEMPORARY)).statusCode).toBe(200);
      const session = await server.app.inject({ method: "GET", url: "/auth/isLogged", headers: bearer(gusSession) });
      expect(session.statusCode).toBe(200);
      expect(
        (await anonymous("PUT", "/resetPassword", { token: gusToken, newPassword: OTHER_PASSWORD })).statusCode,
      ).toBe(204);
      // each got their own notice
      expect((await mail()).map(recipientsOf).sort()).toEqual([[fay.email], [gus.email]]);
    });

    it("lets a user created without a password set the first one through a link", async () => {
      const user = await createResource(admin, {
        resourceType: "User",
        userName: "ivy.invited",
        emails: [{ value: "ivy.invited@example.com", primary: true }],
      });
      problemOf(await login("ivy.invited", NEW_PASSWORD), 401, "invalid_credentials");
      const token = await resetTokenFor({
        id: String(user.id),
        userName: "ivy.invited",
        email: "ivy.invited@example.com",
      });
      expect((await anonymous("PUT", "/resetPassword", { token, newPassword: NEW_PASSWORD })).statusCode).toBe(204);
      const first = await login("ivy.invited", NEW_PASSWORD);
      expect(first.statusCode).toBe(200);
      expect(first.json().firstLogin).toBe(false);
    });

    it("spends a token once even when two requests race with it", async () => {
      const jo = await employee("jo.race");
      const token = await resetTokenFor(jo);
      const answers = await Promise.all(
        [NEW_PASSWORD, OTHER_PASSWORD].map((newPassword) => anonymous("PUT", "/resetPassword", { token, newPassword })),
      );
      expect(answers.map((a) => a.statusCode).sort()).toEqual([204, 400]);
      const loser = answers.find((a) => a.statusCode === 400)!;
      problemOf(loser, 400, "invalid_reset_token");
      const winner = answers[0]!.statusCode === 204 ? NEW_PASSWORD : OTHER_PASSWORD;
      expect((await login(jo.userName, winner)).statusCode).toBe(200);
      // one notice, for the one change
      expect((await mail()).map(recipientsOf)).toEqual([[jo.email]]);
    });
  });

  describe("GET /resetPassword (the page)", () => {
    const SENTINEL = "SeNtInEl-token-4f1d9c";

    for (const path of ["/resetPassword", "/auth/resetPassword"]) {
      it(`${path}?token=… serves a self-contained form under a strict CSP, without the token`, async () => {
        const response = await anonymous("GET", `${path}?token=${SENTINEL}`);
        expect(response.statusCode).toBe(200);
        expect(response.headers["content-type"]).toMatch(/^text\/html/);
        const html = response.body;
        const csp = String(response.headers["content-security-policy"]);
        expect(csp).toContain("default-src 'none'");
        expect(csp).not.toContain("unsafe-inline");
        expect(csp).not.toContain("unsafe-eval");
        expect(csp).not.toMatch(/https?:/);
        expect(csp).toMatch(/frame-ancestors 'none'/);
        const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
        expect(nonce, csp).toBeTruthy();
        // every script and style carries the nonce; no inline handlers
        const scripts = [...html.matchAll(/<script\b([^>]*)>/gi)];
        expect(scripts.length).toBeGreaterThan(0);
        for (const tag of [...scripts, ...html.matchAll(/<style\b([^>]*)>/gi)]) {
          expect(tag[1]).toContain(`nonce="${nonce}"`);
        }
        expect(html).not.toMatch(/\son[a-z]+\s*=/i);
        expect(html).not.toMatch(/\s(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?\/\//i);
        expect(html).not.toMatch(/\s(?:src|href)\s*=\s*["']?https?/i);
        // labels for both inputs
        const inputs = [...html.matchAll(/<input\b[^>]*\bid="([^"]+)"/gi)].map((m) => m[1]!);
        expect(inputs.length).toBe(2);
        for (const id of inputs) expect(html).toMatch(new RegExp(`<label[^>]*for="${id}"`));
        expect(html).toMatch(/type="password"/);
        // the token stays in the address bar
        expect(html).not.toContain(SENTINEL);
        expect(response.headers["referrer-policy"]).toBe("no-referrer");
        expect(response.headers["x-frame-options"]).toBe("DENY");
        // a fresh nonce every time
        const again = await anonymous("GET", `${path}?token=${SENTINEL}`);
        expect(String(again.headers["content-security-policy"])).not.toBe(csp);
      });
    }
  });

  describe("login backoff and POST /auth/unlock/:id", () => {
    it("admin unlocks a locked account (204) and the right password works again; a member may not (403)", async () => {
      const hal = await employee("hal.nine");
      const member = await insertUser(server.app, {
        userName: "mo.member",
        password: OTHER_PASSWORD,
        roles: ["member"],
      });
      for (let i = 0; i < 5; i++) problemOf(await login(hal.userName, WRONG_PASSWORD), 401, "invalid_credentials");
      const locked = await login(hal.userName, TEMPORARY);
      problemOf(locked, 429, "account_locked");
      expect(Number(locked.headers["retry-after"])).toBeGreaterThan(0);

      const asMember = await loggedIn(server.app, member.userName, member.password);
      problemOf(await asMember("POST", `/auth/unlock/${hal.id}`), 403, "forbidden");
      problemOf(await login(hal.userName, TEMPORARY), 429, "account_locked");
      problemOf(await anonymous("POST", `/auth/unlock/${hal.id}`), 401, "token_missing");

      const unlocked = await admin("POST", `/auth/unlock/${hal.id}`);
      expect(unlocked.statusCode).toBe(204);
      expect((await login(hal.userName, TEMPORARY)).statusCode).toBe(200);
      problemOf(await admin("POST", `/auth/unlock/${crypto.randomUUID()}`), 404, "not_found");
    });
  });
});

// Each registered path once had its own @fastify/rate-limit store, so that the alias
// /auth/renewPassword gave a client a second budget.
describe.each([
  ["on renewPassword", "/renewPassword"],
  ["across the spellings of renewPassword", "/auth/renewPassword"],
])("per-client rate limit %s", (_what, fourth) => {
  const server = useTestServer({ loginRateLimit: { max: 3, timeWindowMs: 60_000 }, login: false });

  it(`answers the 4th request in the window (to ${fourth}) with 429 rate_limited and Retry-After`, async () => {
    const call = server.anonymous;
    for (let i = 0; i < 3; i++) {
      expect((await call("POST", "/renewPassword", { userName: `someone${i}` })).statusCode).toBe(202);
    }
    const limited = await call("POST", fourth, { userName: "someone3" });
    problemOf(limited, 429, "rate_limited");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    // another client is not affected
    const other = await server.app.inject({
      method: "POST",
      url: fourth,
      payload: { userName: "someone4" },
      remoteAddress: "127.0.0.9",
    });
    expect(other.statusCode).toBe(202);
  });
});
