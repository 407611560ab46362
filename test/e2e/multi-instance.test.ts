import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bearerHeader as bearer,
  bizctl,
  errorOf,
  httpJson,
  json,
  makeSandbox,
  PASSWORD,
  type RunningServer,
  type Sandbox,
  show,
  startServer,
} from "../helpers/cli.js";
import { resetLinkOf, type SmtpSink, startSmtpSink } from "../helpers/mail.js";
import { authHeader, parseFormBody, signer } from "../helpers/oauth.js";
import { createTestDatabase } from "../helpers/postgres.js";

/**
 * Two `bizctl server start` processes with separate data dirs on one fresh PostgreSQL database,
 * one deployment secret, one Redis (a key prefix of this run's) and one SMTP server, as two hosts
 * behind a load balancer (one public URL). One budget across both instances is checked in
 * test/e2e/shared-limits.test.ts; here the limit is high, since every test logs in.
 */

const PUBLIC_URL = "http://bizctl.test";
const SECRET = Buffer.alloc(32, 9).toString("base64");

describe("two instances on one PostgreSQL database", () => {
  let database: { url: string; drop: () => Promise<void> };
  let sandbox: Sandbox;
  let secretFile: string;
  let smtp: SmtpSink;
  const servers: RunningServer[] = [];
  let a: RunningServer;
  let b: RunningServer;

  /** storage flags: A reads the secret from a file, B from the environment */
  const storage = (which: "a" | "b") =>
    which === "a" ? ["--database", database.url, "--secret-key-file", secretFile] : ["--database", database.url];
  const envOf = (which: "a" | "b") => (which === "a" ? sandbox.env : { ...sandbox.env, BIZCTL_SECRET_KEY: SECRET });

  const post = (server: RunningServer, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    httpJson(server, "POST", path, body, headers);
  const get = (server: RunningServer, path: string, headers: Record<string, string> = {}) =>
    httpJson(server, "GET", path, undefined, headers);
  const loginOn = async (server: RunningServer) => {
    const response = await post(server, "/auth/login", { userName: "admin", password: PASSWORD });
    expect(response.status).toBe(200);
    return ((await response.json()) as { token: string }).token;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    sandbox = await makeSandbox();
    secretFile = join(sandbox.root, "secret.key");
    await writeFile(secretFile, `${SECRET}\n`, { mode: 0o600 });
    smtp = await startSmtpSink();
    const shared = [
      "--public-url",
      PUBLIC_URL,
      "--smtp-url",
      smtp.url,
      "--redis-url",
      "redis://127.0.0.1:6379",
      "--redis-prefix",
      `bizctl-e2e:${crypto.randomUUID()}:`,
      "--login-rate-limit",
      "1000",
    ];
    const start = (which: "a" | "b") =>
      startServer(join(sandbox.root, `data-${which}`), {
        env: envOf(which),
        // B serves with two workers: node:cluster on PostgreSQL
        args: [...storage(which), ...shared, ...(which === "b" ? ["--workers", "2"] : [])],
      });
    // an empty database is refused by start (nothing created in it), and served once initialised
    await expect(start("a")).rejects.toThrow(/was never initialised: it has no users/);
    // both at once on an empty database: one migrates, the other waits for it
    const migrations = await Promise.all(
      (["a", "b"] as const).map((which) => bizctl(["server", "migrate", ...storage(which)], { env: envOf(which) })),
    );
    for (const migrated of migrations) expect(migrated.exitCode, show(migrated)).toBe(0);
    const init = await bizctl(["server", "init", "--admin-user", "admin", "--password-stdin", ...storage("a")], {
      env: envOf("a"),
      input: `${PASSWORD}\n`,
    });
    expect(init.exitCode, show(init)).toBe(0);
    [a, b] = await Promise.all([start("a"), start("b")]);
    servers.push(a, b);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await smtp?.close();
    await sandbox?.remove();
    await database?.drop();
  });

  it("server init on PostgreSQL without a secret refuses, and says how to make one (exit 2)", async () => {
    const result = await bizctl(["server", "init", "--database", database.url, "--password-stdin"], {
      env: sandbox.env,
      input: `${PASSWORD}\n`,
    });
    expect(result.exitCode, show(result)).toBe(2);
    expect(errorOf(result).code).toBe("configuration_error");
    expect(errorOf(result).message).toMatch(/BIZCTL_SECRET_KEY.*openssl rand -base64 32/);
  });

  it("a server started with the wrong secret stops at start with a clear error", async () => {
    const wrong = { ...sandbox.env, BIZCTL_SECRET_KEY: Buffer.alloc(32, 1).toString("base64") };
    await expect(
      startServer(join(sandbox.root, "data-wrong"), { env: wrong, args: ["--database", database.url] }),
    ).rejects.toThrow(/secret key does not open the signing key/);
  });

  it("a token from A works on B, and a logout on A is refused on B at once", async () => {
    const token = await loginOn(a);
    expect((await get(b, "/auth/isLogged", bearer(token))).status).toBe(200);
    expect((await post(a, "/auth/logout", undefined, bearer(token))).status).toBe(204);
    const after = await get(b, "/auth/isLogged", bearer(token));
    expect(after.status).toBe(401);
    expect(((await after.json()) as { code: string }).code).toBe("token_revoked");
  });

  it("a key rotated through the CLI signs tokens on A that B accepts, within the documented 30 s", async () => {
    const rotated = await bizctl(["server", "rotate-key", "--publish-for", "0", "--json", ...storage("b")], {
      env: envOf("b"),
    });
    expect(rotated.exitCode, show(rotated)).toBe(0);
    const kid = json<{ kid: string }>(rotated).kid;
    let token = await loginOn(a);
    const deadline = Date.now() + 40_000;
    while (decodeProtectedHeader(token).kid !== kid && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 2000));
      token = await loginOn(a);
    }
    expect(decodeProtectedHeader(token).kid).toBe(kid);
    expect((await get(b, "/auth/isLogged", bearer(token))).status).toBe(200);
    // every worker of B publishes it within the same bound
    const published = async () => {
      const jwks = (await (await get(b, "/.well-known/jwks.json")).json()) as { keys: { kid: string }[] };
      return jwks.keys.some((k) => k.kid === kid);
    };
    const until = Date.now() + 35_000;
    let seen = 0;
    while (seen < 4 && Date.now() < until) {
      seen = (await published()) ? seen + 1 : 0;
      if (seen < 4) await new Promise((done) => setTimeout(done, 500));
    }
    expect(seen).toBe(4);
  }, 90_000);

  it("a per-account lockout reached through A holds on B", async () => {
    const created = await post(
      a,
      "/Resources",
      { resourceType: "User", userName: "lockme", password: "quiet walnut harbor seventy 77" },
      bearer(await loginOn(a)),
    );
    expect(created.status).toBe(201);
    for (let i = 0; i < 5; i++) {
      expect((await post(a, "/auth/login", { userName: "lockme", password: "wrong wrong wrong 1" })).status).toBe(401);
    }
    const onB = await post(b, "/auth/login", { userName: "lockme", password: "quiet walnut harbor seventy 77" });
    expect(onB.status).toBe(429);
    expect(((await onB.json()) as { code: string }).code).toBe("account_locked");
  });

  it("an OAuth nonce used on A is refused on B", async () => {
    const created = await post(
      a,
      "/Resources",
      { resourceType: "OAuthConsumer", name: "Partner", callbackUrls: ["https://partner.example/cb"] },
      bearer(await loginOn(a)),
    );
    const consumer = (await created.json()) as { consumerKey: string; consumerSecret: string };
    const header = authHeader(signer({ key: consumer.consumerKey, secret: consumer.consumerSecret }), {
      method: "POST",
      url: `${PUBLIC_URL}/oAuth`,
      data: { oauth_callback: "oob" },
    });
    const first = await post(a, "/oAuth", undefined, { authorization: header });
    const body = await first.text();
    expect(first.status, body).toBe(200);
    expect(parseFormBody(body).oauth_callback_confirmed).toBe("true");
    const replay = await post(b, "/oAuth", undefined, { authorization: header });
    expect(replay.status).toBe(401);
    expect(((await replay.json()) as { code: string }).code).toBe("oauth_nonce_reused");
  });

  it("a signed request sent to A and B at once is accepted by one of them only", async () => {
    const admin = await loginOn(a);
    const created = await post(a, "/Resources", { resourceType: "OAuthConsumer", name: "Racer" }, bearer(admin));
    const keys = (await created.json()) as { consumerKey: string; consumerSecret: string };
    const oauth = signer({ key: keys.consumerKey, secret: keys.consumerSecret });
    const endpoint = `${PUBLIC_URL}/oAuth`;
    const initiate = authHeader(oauth, { method: "POST", url: endpoint, data: { oauth_callback: "oob" } });
    const temporary = parseFormBody(await (await post(a, "/oAuth", undefined, { authorization: initiate })).text());
    const approved = await get(b, `/oAuth?oauth_token=${encodeURIComponent(temporary.oauth_token!)}`, bearer(admin));
    const { oauth_verifier } = (await approved.json()) as { oauth_verifier: string };
    const exchange = authHeader(
      oauth,
      { method: "POST", url: endpoint, data: { oauth_verifier } },
      { token: temporary.oauth_token!, secret: temporary.oauth_token_secret! },
    );
    const issued = parseFormBody(await (await post(a, "/oAuth", undefined, { authorization: exchange })).text());
    const access = { token: issued.oauth_token!, secret: issued.oauth_token_secret! };
    // each instance writes the nonces of concurrent requests in one shared commit; the key decides
    const header = authHeader(oauth, { method: "GET", url: endpoint }, access);
    const answers = await Promise.all(
      [a, b, a, b, a, b].map((server) => get(server, "/oAuth", { authorization: header })),
    );
    const codes = await Promise.all(
      answers.map(async (r) => (r.status === 200 ? "ok" : ((await r.json()) as { code: string }).code)),
    );
    expect(codes.filter((code) => code === "ok")).toEqual(["ok"]);
    expect(codes.filter((code) => code !== "ok")).toEqual(Array(5).fill("oauth_nonce_reused"));
  });

  it("a reset mail requested on A goes out through SMTP, and its link is used on B", async () => {
    const created = await post(
      a,
      "/Resources",
      { resourceType: "User", userName: "mailme", emails: [{ value: "mailme@example.com", primary: true }] },
      bearer(await loginOn(a)),
    );
    expect(created.status).toBe(201);
    expect((await post(a, "/renewPassword", { userName: "mailme" })).status).toBe(202);
    const mail = await smtp.waitFor((m) => m.rcptTo.includes("mailme@example.com"), 20_000);
    const { base, token } = resetLinkOf(mail);
    expect(base).toBe(PUBLIC_URL);
    const reset = await httpJson(b, "PUT", "/resetPassword", {
      token,
      newPassword: "brisk lantern meadow 4471 cobalt",
    });
    expect(reset.status).toBe(204);
    const login = await post(b, "/auth/login", { userName: "mailme", password: "brisk lantern meadow 4471 cobalt" });
    expect(login.status).toBe(200);
    // the reset mail and the notice of the change: each queued once, sent once, by one instance or the other
    await smtp.waitFor((m) => m.rcptTo.includes("mailme@example.com") && /changed/i.test(m.subject ?? ""), 20_000);
    const queue = await bizctl(["server", "mail-queue", "--json", ...storage("b")], { env: envOf("b") });
    expect(queue.exitCode, show(queue)).toBe(0);
    const sent = json<{ to: string; status: string }[]>(queue).filter((m) => m.to === "mailme@example.com");
    expect(sent.map((m) => m.status)).toEqual(["sent", "sent"]);
    expect(smtp.messages.filter((m) => m.rcptTo.includes("mailme@example.com"))).toHaveLength(2);
  }, 30_000);

  it("both report their database and Redis ready", async () => {
    for (const server of [a, b]) {
      const ready = await get(server, "/ready");
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ checks: { database: "ok", redis: "ok" } });
    }
  });
});
