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
import { generateKeyPairSync } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiToken,
  bizctl,
  json,
  PASSWORD,
  ROOT,
  type RunningServer,
  show,
  startServer,
  useServer,
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
    const s = useServer({ login: false });
    /** the server of the PLAINTEXT test, started with --allow-plaintext-over-http */
    let plaintext: RunningServer | undefined;
    let bearer: string;
    let consumer: { key: string; secret: string };
    /** a consumer registered with an RSA public key, and the path of its private key */
    let rsaConsumer: { key: string; privateKeyFile: string; publicKeyFile: string };

    beforeAll(async () => {
      bearer = await apiToken(s.server);
      const created = await fetch(`${s.server.url}/Resources`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` },
        body: JSON.stringify({ resourceType: "OAuthConsumer", name: "oauthlib" }),
      });
      const body = (await created.json()) as { consumerKey: string; consumerSecret: string };
      consumer = { key: body.consumerKey, secret: body.consumerSecret };
      const keys = generateKeyPairSync("rsa", { modulusLength: 2048 });
      const privateKeyFile = join(s.sandbox.root, "consumer.pem");
      const publicKeyFile = join(s.sandbox.root, "consumer.pub.pem");
      await writeFile(privateKeyFile, keys.privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
      await writeFile(publicKeyFile, keys.publicKey.export({ type: "spki", format: "pem" }));
      const rsaCreated = await fetch(`${s.server.url}/Resources`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` },
        body: JSON.stringify({
          resourceType: "OAuthConsumer",
          name: "oauthlib-rsa",
          publicKey: keys.publicKey.export({ type: "spki", format: "pem" }),
        }),
      });
      expect(rsaCreated.status).toBe(201);
      rsaConsumer = {
        key: ((await rsaCreated.json()) as { consumerKey: string }).consumerKey,
        privateKeyFile,
        publicKeyFile,
      };
      for (const event of [
        { code: "WEB-1", name: "Webinar", type: "webinar", startsAt: "2027-04-01T10:00:00Z" },
        { code: "MEET-1", name: "Meeting", type: "meeting", startsAt: "2027-04-02T10:00:00Z" },
      ]) {
        const response = await fetch(`${s.server.url}/api/crm/v1/events/`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` },
          body: JSON.stringify(event),
        });
        expect(response.status).toBe(201);
      }
    });
    afterAll(async () => {
      await plaintext?.stop();
    });

    it.each(["HMAC-SHA1", "HMAC-SHA256"])("runs the three legs and signed calls with %s", async (method) => {
      const result = await execa(python!, [CLIENT, s.server.url, consumer.key, method], {
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

    it("runs the three legs and signed calls with RSA-SHA1 (SIGNATURE_RSA); another key is 401", async () => {
      const result = await execa(python!, [CLIENT, s.server.url, rsaConsumer.key, "RSA-SHA1"], {
        input: `${rsaConsumer.privateKeyFile}\n${bearer}\n`,
        reject: false,
        timeout: 60_000,
      });
      expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
      const out = JSON.parse(String(result.stdout));
      expect(out.oauthlib_signature_method).toBe("RSA-SHA1");
      expect(out.identity).toMatchObject({
        status: 200,
        body: { user: { userName: "admin" }, consumerKey: rsaConsumer.key },
      });
      expect(out.events.status).toBe(200);
      expect(out.events_filtered.status).toBe(200);
      expect(out.form.status).toBe(200);
      expect(out.again.status).toBe(200);
      expect(out.wrong_secret).toMatchObject({ status: 401, body: { code: "oauth_signature_invalid" } });
    });

    it("the CLI signs with RSA-SHA1 too: consumers create --public-key-file, flow and call --private-key-file", async () => {
      const profile = await s.run(["profile", "add", "rsa", "--server", s.server.url, "--use"]);
      expect(profile.exitCode, show(profile)).toBe(0);
      const logged = await bizctl(["auth", "login", "--user", "admin", "--password-stdin"], {
        env: s.env,
        input: `${PASSWORD}\n`,
      });
      expect(logged.exitCode, show(logged)).toBe(0);
      const created = await s.run([
        "oauth",
        "consumers",
        "create",
        "--name",
        "cli-rsa",
        "--public-key-file",
        rsaConsumer.publicKeyFile,
        "--json",
      ]);
      expect(created.exitCode, show(created)).toBe(0);
      const key = json<{ consumerKey: string; signatureMethod: string }>(created);
      expect(key.signatureMethod).toBe("RSA-SHA1");
      // without the key file: a usage error naming the flag
      const noKey = await bizctl(
        ["oauth", "flow", "--consumer-key", key.consumerKey, "--signature-method", "RSA-SHA1"],
        {
          env: s.env,
        },
      );
      expect(noKey.exitCode, show(noKey)).toBe(2);
      expect(noKey.stderr).toContain("--private-key-file");
      const flow = await s.run([
        "oauth",
        "flow",
        "--consumer-key",
        key.consumerKey,
        "--signature-method",
        "RSA-SHA1",
        "--private-key-file",
        rsaConsumer.privateKeyFile,
      ]);
      expect(flow.exitCode, show(flow)).toBe(0);
      const call = await s.run(["oauth", "call", "GET", "/api/crm/v1/events?pagesize=1"]);
      expect(call.exitCode, show(call)).toBe(0);
      // HMAC for this consumer is refused
      const hmac = await bizctl(["oauth", "call", "GET", "/api/crm/v1/events", "--signature-method", "HMAC-SHA1"], {
        env: s.env,
      });
      expect(hmac.exitCode, show(hmac)).toBe(4);
    });

    it("PLAINTEXT is refused over plain HTTP, and works with --allow-plaintext-over-http", async () => {
      const refused = await execa(python!, [CLIENT, s.server.url, consumer.key, "PLAINTEXT"], {
        input: `${consumer.secret}\n${bearer}\n`,
        reject: false,
        timeout: 30_000,
      });
      expect(refused.exitCode).not.toBe(0);
      expect(String(refused.stderr)).toMatch(/400|PLAINTEXT/);

      await s.server.stop();
      plaintext = await startServer(s.sandbox.dataDir, { env: s.env, args: ["--allow-plaintext-over-http"] });
      const token = await apiToken(plaintext);
      const result = await execa(python!, [CLIENT, plaintext.url, consumer.key, "PLAINTEXT"], {
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
