/**
 * RSA-SHA1 (RFC 5849 section 3.4.3) with RSA keys made here: the RFC's base string signed and
 * verified, consumers registered with a public key (and the keys refused), the three legs signed
 * by the independent oauth-1.0a package with a custom hash function, and every mismatch a 401.
 */
import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import OAuth from "oauth-1.0a";
import { beforeAll, describe, expect, it } from "vitest";
import { verifyRsaSha1 } from "../../src/server/oauth1/rsa.js";
import { signatureBaseString } from "../../src/server/oauth1/signature.js";
import { authHeader, type Credentials, INJECT_BASE, parseFormBody, RFC_EXAMPLE, signer } from "../helpers/oauth.js";
import { problemOf, useTestServer } from "../helpers/server.js";

const rsaKeys = (bits = 2048) => generateKeyPairSync("rsa", { modulusLength: bits });
const pem = (key: KeyObject) => key.export({ type: "spki", format: "pem" }).toString();
const rsaSign = (base: string, key: KeyObject) => sign("RSA-SHA1", Buffer.from(base), key).toString("base64");

describe("RSA-SHA1 over the base strings of RFC 5849", () => {
  const keys = rsaKeys();
  const other = rsaKeys();
  // section 3.4.1.1: query, header and form body, as in the RFC
  const { params, baseString: printed } = RFC_EXAMPLE;

  it("verifies a signature of the printed base string, over the parameters the request carries", () => {
    const signature = rsaSign(printed, keys.privateKey);
    const base = signatureBaseString("POST", "http://example.com/request", params);
    expect(base).toBe(printed);
    expect(verifyRsaSha1(base, pem(keys.publicKey), signature)).toBe(true);
  });

  it.each([
    ["another key", (s: string) => s, () => pem(other.publicKey)],
    ["a parameter changed", (s: string) => s.replace("a3%3Da", "a3%3Db"), () => pem(keys.publicKey)],
    ["the method changed", (s: string) => s.replace(/^POST/, "GET"), () => pem(keys.publicKey)],
  ])("refuses it with %s", (_name, tamper, key) => {
    const signature = rsaSign(printed, keys.privateKey);
    expect(verifyRsaSha1(tamper(printed), key(), signature)).toBe(false);
  });

  it("refuses a signature that is not base64, and a key that is not one", () => {
    expect(verifyRsaSha1(printed, pem(keys.publicKey), "not base64!")).toBe(false);
    expect(verifyRsaSha1(printed, "not a key", rsaSign(printed, keys.privateKey))).toBe(false);
  });
});

describe("consumers that sign with RSA-SHA1", () => {
  // the admin registers the consumers and is the owner who approves
  const server = useTestServer();
  const keys = rsaKeys();
  let consumer: { key: string; secret: string };
  let hmacConsumer: { key: string; secret: string };

  const create = (body: Record<string, unknown>) =>
    server.call("POST", "/Resources", { resourceType: "OAuthConsumer", name: "Jira", ...body });

  beforeAll(async () => {
    const created = await create({ publicKey: pem(keys.publicKey) });
    expect(created.statusCode, created.body).toBe(201);
    const body = created.json() as { consumerKey: string; consumerSecret: string; publicKey: string };
    expect(body.publicKey).toBe(pem(keys.publicKey));
    consumer = { key: body.consumerKey, secret: body.consumerSecret };
    const plain = (await create({})).json() as { consumerKey: string; consumerSecret: string };
    hmacConsumer = { key: plain.consumerKey, secret: plain.consumerSecret };
  });

  /** oauth-1.0a with its custom hash function: the base string signed with the private key. */
  function rsaSigner(key: KeyObject = keys.privateKey, consumerKey = consumer.key): OAuth {
    return new OAuth({
      consumer: { key: consumerKey, secret: "" },
      signature_method: "RSA-SHA1",
      hash_function: (base) => rsaSign(base, key),
    });
  }

  const post = (authorization: string) =>
    server.app.inject({ method: "POST", url: "/oAuth", headers: { authorization } });
  const url = `${INJECT_BASE}/oAuth`;

  async function threeLegs(): Promise<Credentials> {
    const first = await post(authHeader(rsaSigner(), { method: "POST", url, data: { oauth_callback: "oob" } }));
    expect(first.statusCode, first.body).toBe(200);
    const t = parseFormBody(first.body);
    const temporary = { token: t.oauth_token!, secret: t.oauth_token_secret! };
    const approval = await server.app.inject({
      method: "GET",
      url: `/oAuth?oauth_token=${temporary.token}`,
      headers: server.auth,
    });
    const verifier = (approval.json() as { oauth_verifier: string }).oauth_verifier;
    const exchange = await post(
      authHeader(rsaSigner(), { method: "POST", url, data: { oauth_verifier: verifier } }, temporary),
    );
    expect(exchange.statusCode, exchange.body).toBe(200);
    const a = parseFormBody(exchange.body);
    return { token: a.oauth_token!, secret: a.oauth_token_secret! };
  }

  it.each([
    ["not PEM", () => "hello"],
    ["an EC key", () => pem(generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey)],
    ["a 1024-bit RSA key", () => pem(rsaKeys(1024).publicKey)],
  ])("refuses a publicKey that is %s (400, nothing created)", async (_name, key) => {
    const before = await server.app.inject({
      method: "GET",
      url: "/Resources?resourcetypes=OAuthConsumer&count=0",
      headers: server.auth,
    });
    const response = await create({ publicKey: key() });
    const problem = problemOf(response, 400, "validation_failed");
    expect(problem.errors?.[0]?.path).toBe("/publicKey");
    const after = await server.app.inject({
      method: "GET",
      url: "/Resources?resourcetypes=OAuthConsumer&count=0",
      headers: server.auth,
    });
    expect(after.json().totalResults).toBe(before.json().totalResults);
  });

  it("runs the three legs and signed calls with RSA-SHA1 (the token secret plays no part)", async () => {
    const access = await threeLegs();
    const path = "/api/crm/v1/events?pagesize=5";
    const events = await server.app.inject({
      method: "GET",
      url: path,
      headers: { authorization: authHeader(rsaSigner(), { method: "GET", url: `${INJECT_BASE}${path}` }, access) },
    });
    expect(events.statusCode, events.body).toBe(200);
  });

  it("refuses a tampered request, another key, and the consumer's HMAC secret (401)", async () => {
    const access = await threeLegs();
    const signed = (oauth: OAuth, signedPath: string) =>
      authHeader(oauth, { method: "GET", url: `${INJECT_BASE}${signedPath}` }, access);
    const cases = [
      ["tampered query", signed(rsaSigner(), "/api/crm/v1/events?pagesize=5"), "/api/crm/v1/events?pagesize=6"],
      ["another key", signed(rsaSigner(rsaKeys().privateKey), "/api/crm/v1/events"), "/api/crm/v1/events"],
      ["HMAC-SHA1 with its secret", signed(signer(consumer), "/api/crm/v1/events"), "/api/crm/v1/events"],
    ] as const;
    for (const [name, authorization, sentPath] of cases) {
      const response = await server.app.inject({ method: "GET", url: sentPath, headers: { authorization } });
      expect(response.statusCode, name).toBe(401);
      expect(response.json().code, name).toBe("oauth_signature_invalid");
    }
  });

  it("refuses RSA-SHA1 from a consumer registered without a public key (401)", async () => {
    const response = await post(
      authHeader(rsaSigner(keys.privateKey, hmacConsumer.key), {
        method: "POST",
        url,
        data: { oauth_callback: "oob" },
      }),
    );
    problemOf(response, 401, "oauth_signature_invalid");
    expect(response.json().detail).toMatch(/no public key/);
  });
});
