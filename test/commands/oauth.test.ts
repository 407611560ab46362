/**
 * The `oauth` group, embedded and against a real server: consumers,
 * the three legs one by one and as `flow`, signed calls with the stored token credentials, the
 * admin's token list and revocation, and the errors a script branches on.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { errorOf, json, leaksOf, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

const MEMBER = "mia.member";
const MEMBER_TEMPORARY = "temporary member passphrase 1";
const MEMBER_PASSWORD = "the member's own long passphrase 2";

interface Consumer {
  id: string;
  name: string;
  consumerKey: string;
  consumerSecret: string;
  callbackUrls: string[];
}

describe.each(MODES)("oauth (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let consumer: Consumer;
  let memberEnv: Record<string, string>;
  const secrets: string[] = [];

  beforeAll(async () => {
    const created = await s.run(
      [
        "oauth",
        "consumers",
        "create",
        "--name",
        "Printer",
        "--callback",
        "https://printer.example.com/ready",
        "--json",
      ],
      {},
    );
    expect(created.exitCode, show(created)).toBe(0);
    consumer = json<Consumer>(created);
    secrets.push(consumer.consumerSecret);
  });

  const profileName = () => (mode === "remote" ? "r" : "default");
  const config = (env = s.env) =>
    JSON.parse(readFileSync(join(env.BIZCTL_CONFIG_DIR!, "config.json"), "utf8")) as {
      profiles: Record<string, { oauth?: Record<string, unknown>; auth?: unknown }>;
    };

  it("creates a consumer: its key, and its secret shown once", async () => {
    expect(consumer).toMatchObject({ name: "Printer", callbackUrls: ["https://printer.example.com/ready"] });
    expect(consumer.consumerKey.length).toBeGreaterThanOrEqual(20);
    expect(consumer.consumerSecret.length).toBeGreaterThanOrEqual(40);
    const got = await s.run(["oauth", "consumers", "get", consumer.id, "--json"]);
    expect(got.exitCode, show(got)).toBe(0);
    expect(json(got)).toMatchObject({ id: consumer.id, consumerKey: consumer.consumerKey });
    expect(got.stdout).not.toContain(consumer.consumerSecret);
    const list = await s.run(["oauth", "consumers", "list", "--json"]);
    expect(list.exitCode, show(list)).toBe(0);
    expect(json<{ id: string }[]>(list).map((c) => c.id)).toContain(consumer.id);
    expect(list.stdout).not.toContain(consumer.consumerSecret);
    // another kind of resource is not a consumer
    const notConsumer = await s.run(["oauth", "consumers", "get", s.userId, "--json"]);
    expect(notConsumer.exitCode, show(notConsumer)).toBe(3);
  });

  it("runs the three legs one by one, secrets on stdin, and keeps the token credentials in the profile", async () => {
    const requested = await s.run(
      ["oauth", "request-token", "--consumer-key", consumer.consumerKey, "--consumer-secret-stdin", "--json"],
      { input: `${consumer.consumerSecret}\n` },
    );
    expect(requested.exitCode, show(requested)).toBe(0);
    const temporary = json<{ oauth_token: string; oauth_token_secret: string; oauth_callback_confirmed: boolean }>(
      requested,
    );
    expect(temporary.oauth_callback_confirmed).toBe(true);
    secrets.push(temporary.oauth_token_secret);

    const approved = await s.run(["oauth", "authorize", temporary.oauth_token, "--json"]);
    expect(approved.exitCode, show(approved)).toBe(0);
    const { oauth_verifier: verifier } = json<{ oauth_verifier: string }>(approved);
    expect(verifier).toEqual(expect.any(String));

    // both secrets on stdin, one per line, in prompt order: the consumer's, then the temporary token's
    const exchange = (...extra: string[]) =>
      s.run(
        [
          "oauth",
          "access-token",
          "--consumer-key",
          consumer.consumerKey,
          "--consumer-secret-stdin",
          "--token",
          temporary.oauth_token,
          "--token-secret-stdin",
          "--verifier",
          verifier,
          ...extra,
        ],
        { input: `${consumer.consumerSecret}\n${temporary.oauth_token_secret}\n` },
      );
    const exchanged = await exchange("--json");
    expect(exchanged.exitCode, show(exchanged)).toBe(0);
    const result = json(exchanged);
    expect(result).toMatchObject({ profile: profileName(), consumerKey: consumer.consumerKey, user: s.userName });
    const stored = config().profiles[profileName()]!.oauth!;
    expect(stored).toMatchObject({ consumerKey: consumer.consumerKey, token: result.token });
    secrets.push(String(stored.tokenSecret));
    expect((statSync(join(s.env.BIZCTL_CONFIG_DIR!, "config.json")).mode & 0o777).toString(8)).toBe("600");

    // the verifier is spent
    const again = await exchange();
    expect(again.exitCode, show(again)).toBe(4);
    expect(errorOf(again).code).toBe("oauth_verifier_invalid");
  });

  it("whoami and call sign with the stored token credentials", async () => {
    const who = await s.run(["oauth", "whoami", "--json"]);
    expect(who.exitCode, show(who)).toBe(0);
    expect(json(who)).toMatchObject({ user: s.userName, userId: s.userId, consumerKey: consumer.consumerKey });

    const created = await s.run([
      "oauth",
      "call",
      "POST",
      "/api/crm/v1/events",
      "--data",
      '{"code":"OAUTH-CLI","name":"Signed from the CLI","type":"webinar","startsAt":"2027-05-01T10:00:00Z"}',
    ]);
    expect(created.exitCode, show(created)).toBe(0);
    expect(json(created)).toMatchObject({ code: "OAUTH-CLI", createdBy: s.userName });
    // a query with spaces (as + and as %20), quotes and a repeated-looking filter: all signed
    const listed = await s.run([
      "oauth",
      "call",
      "GET",
      '/api/crm/v1/events?pagesize=5&order=-startsAt&filter=type+eq+"webinar"%20and%20code%20sw%20"OAUTH"',
    ]);
    expect(listed.exitCode, show(listed)).toBe(0);
    expect(json<{ data: { code: string }[] }>(listed).data.map((e) => e.code)).toEqual(["OAUTH-CLI"]);
    const missing = await s.run(["oauth", "call", "GET", "/api/crm/v1/events/NOPE"]);
    expect(missing.exitCode, show(missing)).toBe(3);
    // the Bearer token is not what signed them: without it they still work
    const withoutBearer = await s.run(["oauth", "whoami", "--json"], { env: { BIZCTL_TOKEN: "not-a-token" } });
    expect(withoutBearer.exitCode, show(withoutBearer)).toBe(0);
  });

  it.each(["constructor", "toString", "valueOf"])("call signs a query parameter named %s as sent", async (name) => {
    const result = await s.run(["oauth", "call", "GET", `/api/crm/v1/events?${name}=1`]);
    // the signature verifies (not exit 4), so the server reads the query: no such parameter of the list
    expect(result.exitCode, show(result)).toBe(7);
    expect(errorOf(result).code).toBe("validation_failed");
    expect(errorOf(result).message).toContain(name);
  });

  it("flow runs all three legs for a member who logs in elsewhere, with HMAC-SHA256", async () => {
    const created = await s.run(["users", "create", "--user-name", MEMBER, "--password-stdin", "--json"], {
      input: `${MEMBER_TEMPORARY}\n`,
    });
    expect(created.exitCode, show(created)).toBe(0);
    memberEnv = await s.newConfig("member");
    const logged = await s.login(memberEnv, MEMBER, MEMBER_TEMPORARY, MEMBER_PASSWORD);
    expect(logged.exitCode, show(logged)).toBe(0);
    const flow = await s.run(
      [
        "oauth",
        "flow",
        "--consumer-key",
        consumer.consumerKey,
        "--consumer-secret-stdin",
        "--signature-method",
        "HMAC-SHA256",
        "--json",
      ],
      { env: memberEnv, input: `${consumer.consumerSecret}\n` },
    );
    expect(flow.exitCode, show(flow)).toBe(0);
    expect(json(flow)).toMatchObject({ user: MEMBER, roles: ["member"], consumerKey: consumer.consumerKey });
    expect(flow.stderr).toContain("3/3");
    secrets.push(String(config(memberEnv).profiles[profileName()]!.oauth!.tokenSecret));
    const who = await s.run(["oauth", "whoami", "--json"], { env: memberEnv });
    expect(json(who)).toMatchObject({ user: MEMBER, roles: ["member"] });
    // a member's token credentials are a member's: no admin operations
    const forbidden = await s.run(["oauth", "call", "GET", "/oauth/tokens"], { env: memberEnv });
    expect(forbidden.exitCode, show(forbidden)).toBe(5);
  });

  it("a member lists its own grants and revokes one, never another user's", async () => {
    const listed = await s.run(["oauth", "tokens", "list", "--json"], { env: memberEnv });
    expect(listed.exitCode, show(listed)).toBe(0);
    const grants = json<{ token: string; userName: string; consumerName: string; lastUsedAt?: string }[]>(listed);
    expect(grants.map((g) => [g.userName, g.consumerName])).toEqual([[MEMBER, "Printer"]]);
    // whoami signed with it a moment ago
    expect(grants[0]!.lastUsedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const adminGrant = String(config().profiles[profileName()]!.oauth!.token);
    const notTheirs = await s.run(["oauth", "tokens", "revoke", adminGrant, "--yes"], { env: memberEnv });
    expect(notTheirs.exitCode, show(notTheirs)).toBe(3);
    expect((await s.run(["oauth", "whoami"])).exitCode).toBe(0);
    const revoked = await s.run(["oauth", "tokens", "revoke", grants[0]!.token, "--yes"], { env: memberEnv });
    expect(revoked.exitCode, show(revoked)).toBe(0);
    const after = await s.run(["oauth", "whoami"], { env: memberEnv });
    expect(after.exitCode, show(after)).toBe(4);
    expect(errorOf(after).code).toBe("oauth_token_invalid");
    // granted again, for the admin's listing below
    const again = await s.run(["oauth", "flow", "--consumer-key", consumer.consumerKey, "--consumer-secret-stdin"], {
      env: memberEnv,
      input: `${consumer.consumerSecret}\n`,
    });
    expect(again.exitCode, show(again)).toBe(0);
  });

  it("lists granted tokens for an admin, by user too, and revokes one", async () => {
    const all = await s.run(["oauth", "tokens", "list", "--json"]);
    expect(all.exitCode, show(all)).toBe(0);
    const tokens = json<{ token: string; userName: string; consumerKey: string }[]>(all);
    expect(tokens.map((t) => t.userName).sort()).toEqual([s.userName, MEMBER].sort());
    const stored = config().profiles[profileName()]!.oauth!;
    const mine = await s.run(["oauth", "tokens", "list", "--user", s.userId, "--json"]);
    expect(json<{ token: string }[]>(mine).map((t) => t.token)).toEqual([stored.token]);

    const refused = await s.run(["oauth", "tokens", "revoke", String(stored.token)]);
    expect(refused.exitCode, show(refused)).toBe(2);
    const revoked = await s.run(["oauth", "tokens", "revoke", String(stored.token), "--yes"]);
    expect(revoked.exitCode, show(revoked)).toBe(0);
    const who = await s.run(["oauth", "whoami"]);
    expect(who.exitCode, show(who)).toBe(4);
    expect(errorOf(who).code).toBe("oauth_token_invalid");
    const unknown = await s.run(["oauth", "tokens", "revoke", "nope", "--yes"]);
    expect(unknown.exitCode, show(unknown)).toBe(3);
  });

  it("explains what is missing or wrong with the exit codes of the spec", async () => {
    // no secret and no terminal: exit 2 naming the flag
    const noSecret = await s.run(["oauth", "request-token", "--consumer-key", consumer.consumerKey]);
    expect(noSecret.exitCode, show(noSecret)).toBe(2);
    expect(errorOf(noSecret).hint).toContain("--consumer-secret-stdin");
    const noKey = await s.run(["oauth", "request-token", "--consumer-secret-stdin"], { input: "x\n" });
    expect(noKey.exitCode, show(noKey)).toBe(2);
    // the secret from the environment
    const fromEnv = await s.run(["oauth", "request-token", "--consumer-key", consumer.consumerKey, "--json"], {
      env: { BIZCTL_OAUTH_CONSUMER_SECRET: consumer.consumerSecret },
    });
    expect(fromEnv.exitCode, show(fromEnv)).toBe(0);
    secrets.push(json<{ oauth_token_secret: string }>(fromEnv).oauth_token_secret);
    // a wrong secret: 4 oauth_signature_invalid
    const wrong = await s.run(
      ["oauth", "request-token", "--consumer-key", consumer.consumerKey, "--consumer-secret-stdin"],
      { input: "not the secret\n" },
    );
    expect(wrong.exitCode, show(wrong)).toBe(4);
    expect(errorOf(wrong)).toMatchObject({ code: "oauth_signature_invalid", status: 401 });
    // an unregistered callback: 7
    const callback = await s.run(
      [
        "oauth",
        "request-token",
        "--consumer-key",
        consumer.consumerKey,
        "--consumer-secret-stdin",
        "--callback",
        "https://evil.example/",
      ],
      { input: `${consumer.consumerSecret}\n` },
    );
    expect(callback.exitCode, show(callback)).toBe(7);
    // approving an unknown token
    const unknown = await s.run(["oauth", "authorize", "no-such-token"]);
    expect(unknown.exitCode, show(unknown)).toBe(4);
    expect(errorOf(unknown).code).toBe("oauth_token_invalid");
    // whoami without stored credentials
    const fresh = await s.newConfig("fresh");
    const nothing = await s.run(["oauth", "whoami"], { env: fresh });
    expect(nothing.exitCode, show(nothing)).toBe(4);
    expect(errorOf(nothing).hint).toContain("oauth flow");
    // approving needs a login
    const notLogged = await s.run(["oauth", "authorize", "whatever"], { env: fresh });
    expect(notLogged.exitCode, show(notLogged)).toBe(4);
    // a bad signature method
    const method = await s.run(
      ["oauth", "flow", "--consumer-key", consumer.consumerKey, "--signature-method", "RSA-SHA1"],
      { input: "x\n" },
    );
    expect(method.exitCode, show(method)).toBe(2);
  });

  it("deleting the consumer (with --yes) ends the tokens issued to it", async () => {
    const flow = await s.run(["oauth", "flow", "--consumer-key", consumer.consumerKey, "--consumer-secret-stdin"], {
      input: `${consumer.consumerSecret}\n`,
    });
    expect(flow.exitCode, show(flow)).toBe(0);
    secrets.push(String(config().profiles[profileName()]!.oauth!.tokenSecret));
    expect((await s.run(["oauth", "whoami"])).exitCode).toBe(0);
    const refused = await s.run(["oauth", "consumers", "delete", consumer.id]);
    expect(refused.exitCode, show(refused)).toBe(2);
    const deleted = await s.run(["oauth", "consumers", "delete", consumer.id, "--yes"]);
    expect(deleted.exitCode, show(deleted)).toBe(0);
    const who = await s.run(["oauth", "whoami"]);
    expect(who.exitCode, show(who)).toBe(4);
    const tokens = await s.run(["oauth", "tokens", "list", "--json"]);
    expect(json(tokens)).toEqual([]);
  });

  it("never prints a token secret, and the consumer secret only in the create output", () => {
    const [consumerSecret, ...tokenSecrets] = secrets;
    expect(leaksOf(consumerSecret!, (what) => what.startsWith("bizctl oauth consumers create"))).toEqual([]);
    for (const secret of tokenSecrets) {
      expect(leaksOf(secret, (what) => what.startsWith("bizctl oauth request-token"))).toEqual([]);
    }
  });
});
