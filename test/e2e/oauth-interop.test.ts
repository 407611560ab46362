/**
 * Interoperability: an independent OAuth 1.0a client (oauthlib, through Debian's
 * python3-requests-oauthlib) runs the three legs and signed calls against a real
 * `bizctl server start --port 0`, with HMAC-SHA1 and HMAC-SHA256.
 *
 * The client is test/fixtures/oauth_client.py. Where neither `python3` nor /usr/bin/python3 can
 * import requests_oauthlib the test is skipped with a message; in CI (CI set) it fails instead,
 * as CI installs the package: apt-get install -y python3-requests-oauthlib.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bizctl,
  json,
  makeSandbox,
  PASSWORD,
  ROOT,
  type RunningServer,
  type Sandbox,
  show,
  startServer,
} from "../helpers/cli.js";

const CLIENT = join(ROOT, "test", "fixtures", "oauth_client.py");

function findPython(): string | undefined {
  const candidates = [process.env.BIZCTL_PYTHON, "python3", "/usr/bin/python3"].filter((c): c is string => !!c);
  for (const candidate of candidates) {
    const probe = spawnSync(candidate, ["-c", "import requests_oauthlib, oauthlib.oauth1"], { stdio: "ignore" });
    if (probe.status === 0) return candidate;
  }
  return undefined;
}

const python = findPython();
const MISSING =
  "skipped: no python3 that can import requests_oauthlib (install it with: apt-get install -y python3-requests-oauthlib)";
if (!python && !process.env.CI) console.warn(`oauth interoperability test ${MISSING}`);

describe("OAuth 1.0a interoperability with oauthlib (python3-requests-oauthlib)", () => {
  it.runIf(!python && process.env.CI)("has python3-requests-oauthlib in CI", () => {
    throw new Error(`CI must run the interoperability test, but it was ${MISSING}`);
  });

  describe.skipIf(!python)("against a real server", () => {
    let sandbox: Sandbox;
    let server: RunningServer;
    let bearer: string;
    let consumer: { key: string; secret: string };

    beforeAll(async () => {
      sandbox = await makeSandbox();
      const init = await bizctl(["server", "init", "--admin-user", "admin", "--password-stdin"], {
        env: sandbox.env,
        input: `${PASSWORD}\n`,
      });
      expect(init.exitCode, show(init)).toBe(0);
      server = await startServer(sandbox.dataDir, { env: sandbox.env });
      const login = await fetch(`${server.url}/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ userName: "admin", password: PASSWORD }),
      });
      bearer = ((await login.json()) as { token: string }).token;
      const created = await fetch(`${server.url}/Resources`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` },
        body: JSON.stringify({ resourceType: "OAuthConsumer", name: "oauthlib" }),
      });
      const body = (await created.json()) as { consumerKey: string; consumerSecret: string };
      consumer = { key: body.consumerKey, secret: body.consumerSecret };
      for (const event of [
        { code: "WEB-1", name: "Webinar", type: "webinar", startsAt: "2027-04-01T10:00:00Z" },
        { code: "MEET-1", name: "Meeting", type: "meeting", startsAt: "2027-04-02T10:00:00Z" },
      ]) {
        const response = await fetch(`${server.url}/api/crm/v1/events/`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` },
          body: JSON.stringify(event),
        });
        expect(response.status).toBe(201);
      }
    });
    afterAll(async () => {
      await server?.stop();
      await sandbox?.remove();
    });

    it.each(["HMAC-SHA1", "HMAC-SHA256"])("runs the three legs and signed calls with %s", async (method) => {
      const result = await execa(python!, [CLIENT, server.url, consumer.key, method], {
        input: `${consumer.secret}\n${bearer}\n`,
        reject: false,
        timeout: 30_000,
      });
      expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
      const out = json({ args: [CLIENT], exitCode: 0, stdout: String(result.stdout), stderr: "" });
      expect(out.oauthlib_signature_method).toBe(method);
      expect(out.temporary_keys).toEqual(["oauth_callback_confirmed", "oauth_token", "oauth_token_secret"]);
      expect(out.callback_confirmed).toBe("true");
      expect(out.approval_status).toBe(200);
      expect(out.access_keys).toEqual(["oauth_token", "oauth_token_secret"]);
      expect(out.identity).toMatchObject({
        status: 200,
        body: { user: { userName: "admin", roles: ["admin"] }, consumerKey: consumer.key },
      });
      expect(out.events.status).toBe(200);
      expect(out.events.body.data.map((e: { code: string }) => e.code).sort()).toEqual(["MEET-1", "WEB-1"]);
      expect(out.events_filtered.status, JSON.stringify(out.events_filtered)).toBe(200);
      expect(out.events_filtered.body.data.map((e: { code: string }) => e.code)).toEqual(["WEB-1"]);
      expect(out.form, "a signed form body with + and repeated names").toMatchObject({ status: 200 });
      expect(out.again.status).toBe(200);
      expect(out.wrong_secret).toMatchObject({ status: 401, body: { code: "oauth_signature_invalid" } });
    });

    it("PLAINTEXT is refused over plain HTTP, and works with --allow-plaintext-over-http", async () => {
      const refused = await execa(python!, [CLIENT, server.url, consumer.key, "PLAINTEXT"], {
        input: `${consumer.secret}\n${bearer}\n`,
        reject: false,
        timeout: 30_000,
      });
      expect(refused.exitCode).not.toBe(0);
      expect(String(refused.stderr)).toMatch(/400|PLAINTEXT/);

      await server.stop();
      server = await startServer(sandbox.dataDir, { env: sandbox.env, args: ["--allow-plaintext-over-http"] });
      const login = await fetch(`${server.url}/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ userName: "admin", password: PASSWORD }),
      });
      const token = ((await login.json()) as { token: string }).token;
      const result = await execa(python!, [CLIENT, server.url, consumer.key, "PLAINTEXT"], {
        input: `${consumer.secret}\n${token}\n`,
        reject: false,
        timeout: 30_000,
      });
      expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
      const out = JSON.parse(String(result.stdout));
      expect(out.identity).toMatchObject({ status: 200, body: { user: { userName: "admin" } } });
      expect(out.events.status).toBe(200);
      expect(out.wrong_secret).toMatchObject({ status: 401, body: { code: "oauth_signature_invalid" } });
    });
  });
});
