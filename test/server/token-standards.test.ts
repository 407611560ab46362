/**
 * Access tokens as outside clients read them: RFC 9068's claims, checked by PyJWT (Debian's
 * python3-jwt, installed by CI), and RFC 6750's challenge on every refusal.
 */

import { join } from "node:path";
import { execa } from "execa";
import { generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";
import { findPython } from "../helpers/python.js";
import {
  ADMIN_PASSWORD,
  ADMIN_USER,
  bearer,
  loginToken,
  manualClock,
  problemOf,
  startTestServer,
  type TestServer,
} from "../helpers/server.js";

const VERIFY = join(ROOT, "test", "fixtures", "verify_token.py");
const python = findPython(["jwt", "cryptography"]);
const MISSING = "no python3 that can import jwt (apt-get install -y python3-jwt python3-cryptography)";

const decodePart = (part: string) => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));

/** A token of the right shape signed by a key this server never had. */
async function foreignToken(): Promise<string> {
  const { privateKey } = await generateKeyPair("ES256");
  return new SignJWT({ client_id: "bizctl-cli", roles: ["admin"] })
    .setProtectedHeader({ alg: "ES256", kid: "not-ours", typ: "at+jwt" })
    .setIssuer("urn:bizctl")
    .setAudience("bizctl-api")
    .setSubject("someone")
    .setJti("x")
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(privateKey);
}

describe("access tokens (RFC 9068) and their refusals (RFC 6750)", () => {
  let server: TestServer;
  const clock = manualClock();
  let token: string;

  beforeAll(async () => {
    server = await startTestServer({ clock: clock.clock });
    token = await loginToken(server.app, ADMIN_USER, ADMIN_PASSWORD);
  });
  afterAll(async () => server?.close());

  it("carries the claims RFC 9068 requires, client_id naming the first-party client", () => {
    const [header, payload] = token.split(".").map((part, i) => (i < 2 ? decodePart(part) : part));
    expect(header).toMatchObject({ alg: "ES256", typ: "at+jwt" });
    expect(payload).toMatchObject({ iss: "urn:bizctl", aud: "bizctl-api", client_id: "bizctl-cli" });
    for (const claim of ["sub", "exp", "iat", "jti"]) expect(payload).toHaveProperty(claim);
  });

  it.runIf(!python && process.env.CI)("has python3-jwt in CI", () => {
    throw new Error(`CI must verify tokens with PyJWT, but there is ${MISSING}`);
  });

  it.skipIf(!python)("is accepted by PyJWT against the published JWKS", async () => {
    const jwks = (await server.app.inject({ method: "GET", url: "/.well-known/jwks.json" })).body;
    const accepted = await execa(python!, [VERIFY, token, jwks], { reject: false });
    expect(accepted.stderr).toBe("");
    expect(JSON.parse(accepted.stdout)).toMatchObject({ client_id: "bizctl-cli", iss: "urn:bizctl" });
    // the check can fail: a token of another key is refused by PyJWT too
    const refused = await execa(python!, [VERIFY, await foreignToken(), jwks], { reject: false });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain("no key 'not-ours'");
  });

  const challenges: { name: string; authorization: () => Promise<string | undefined>; code: string; error: boolean }[] =
    [
      { name: "no Authorization header", authorization: async () => undefined, code: "token_missing", error: false },
      {
        name: "another scheme",
        authorization: async () => "Basic YWRhOnNlY3JldA==",
        code: "token_invalid",
        error: true,
      },
      { name: "not a JWT", authorization: async () => "Bearer not-a-jwt", code: "token_invalid", error: true },
      {
        name: "a foreign key",
        authorization: async () => `Bearer ${await foreignToken()}`,
        code: "token_invalid",
        error: true,
      },
    ];

  it.each(challenges)(
    "answers $name with 401 $code and the RFC 6750 challenge",
    async ({ authorization, code, error }) => {
      const value = await authorization();
      const response = await server.app.inject({
        method: "GET",
        url: "/auth/isLogged",
        headers: value === undefined ? {} : { authorization: value },
      });
      const problem = problemOf(response, 401, code);
      const challenge = String(response.headers["www-authenticate"]);
      if (!error) expect(challenge).toBe('Bearer realm="bizctl"');
      else
        expect(challenge).toBe(`Bearer realm="bizctl", error="invalid_token", error_description="${problem.detail}"`);
    },
  );

  it("says why a revoked and an expired token were refused, in a description RFC 6750 can quote", async () => {
    const revoked = await loginToken(server.app, ADMIN_USER, ADMIN_PASSWORD);
    await server.app.inject({ method: "POST", url: "/auth/logout", headers: bearer(revoked) });
    const afterLogout = await server.app.inject({ method: "GET", url: "/auth/isLogged", headers: bearer(revoked) });
    problemOf(afterLogout, 401, "token_revoked");
    expect(afterLogout.headers["www-authenticate"]).toMatch(
      /^Bearer realm="bizctl", error="invalid_token", error_description="[\x20\x21\x23-\x5b\x5d-\x7e]+"$/,
    );

    clock.advance(24 * 3600 * 1000);
    const expired = await server.app.inject({ method: "GET", url: "/auth/isLogged", headers: bearer(token) });
    problemOf(expired, 401, "token_expired");
    expect(expired.headers["www-authenticate"]).toContain('error="invalid_token"');
  });
});
