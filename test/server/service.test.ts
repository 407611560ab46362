/**
 * Service endpoints and the headers of every response, over real HTTP on an ephemeral port.
 */
import type { webcrypto } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ADMIN_PASSWORD, ADMIN_USER, problemOf, useTestServer, type WireResponse } from "../helpers/server.js";

describe("service endpoints over HTTP", () => {
  const server = useTestServer({ listen: true, login: false });
  const call = server.wire;

  async function loginOverHttp(): Promise<string> {
    const response = await call("POST", "/auth/login", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ userName: ADMIN_USER, password: ADMIN_PASSWORD }),
    });
    expect(response.statusCode).toBe(200);
    return JSON.parse(response.body).token;
  }

  it("listens on an ephemeral loopback port", () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).not.toMatch(/:0$/);
  });

  it("GET /health answers 200 ok without a credential", async () => {
    const response = await call("GET", "/health");
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(JSON.parse(response.body)).toEqual({ status: "ok" });
  });

  it("GET /ready answers 200 ready, with the state of each dependency, while the database is reachable", async () => {
    const response = await call("GET", "/ready");
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: "ready", checks: { database: "ok" } });
  });

  it("GET /.well-known/jwks.json publishes the kid of the login token, and no private key material", async () => {
    const token = await loginOverHttp();
    const header = JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString("utf8"));
    expect(header).toMatchObject({ alg: "ES256", typ: "at+jwt" });
    expect(typeof header.kid).toBe("string");

    const response = await call("GET", "/.well-known/jwks.json");
    expect(response.statusCode).toBe(200);
    const jwks = JSON.parse(response.body) as { keys: Record<string, unknown>[] };
    expect(jwks.keys.length).toBeGreaterThan(0);
    const key = jwks.keys.find((k) => k.kid === header.kid);
    expect(key).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
    expect(typeof key?.x).toBe("string");
    expect(typeof key?.y).toBe("string");
    for (const k of jwks.keys) {
      expect(k).not.toHaveProperty("d");
      for (const member of ["p", "q", "dp", "dq", "qi", "k"]) expect(k).not.toHaveProperty(member);
    }
    expect(response.body).not.toContain('"d"');
  });

  it("the published key verifies the login token", async () => {
    const token = await loginOverHttp();
    const [header, payload, signature] = token.split(".") as [string, string, string];
    const kid = JSON.parse(Buffer.from(header, "base64url").toString("utf8")).kid;
    const jwks = JSON.parse((await call("GET", "/.well-known/jwks.json")).body) as { keys: webcrypto.JsonWebKey[] };
    const jwk = jwks.keys.find((k) => (k as { kid?: string }).kid === kid)!;
    const key = await crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
    const ok = await crypto.subtle.verify(
      { name: "ECDSA", hash: "SHA-256" },
      key,
      Buffer.from(signature, "base64url"),
      Buffer.from(`${header}.${payload}`),
    );
    expect(ok).toBe(true);
  });

  it("GET /openapi.json is OpenAPI 3.1 and documents the events and auth paths", async () => {
    const response = await call("GET", "/openapi.json");
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    const doc = JSON.parse(response.body) as {
      openapi: string;
      info: { title: string };
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBeTruthy();
    const paths = Object.keys(doc.paths);
    for (const path of [
      "/auth/login",
      "/auth/logout",
      "/auth/isLogged",
      "/auth/isFirstLogin",
      "/auth/ChangePassWithLastPass",
      "/api/crm/v1/events",
      "/api/crm/v1/events/{code}",
    ]) {
      expect(paths, path).toContain(path);
    }
    expect(Object.keys(doc.paths["/api/crm/v1/events"]!).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/api/crm/v1/events/{code}"]!).sort()).toEqual(["delete", "get", "put"]);
    expect(doc.paths["/auth/login"]!.post?.operationId).toBe("auth.login");
    expect(paths.some((p) => p.includes("isFirstLogin/{employeeId}"))).toBe(true);
  });

  it("puts x-content-type-options and x-request-id on every response, success or failure", async () => {
    const token = await loginOverHttp();
    const responses: [string, WireResponse][] = [
      ["health", await call("GET", "/health")],
      ["ready", await call("GET", "/ready")],
      ["jwks", await call("GET", "/.well-known/jwks.json")],
      ["openapi", await call("GET", "/openapi.json")],
      ["no route", await call("GET", "/no/such/route")],
      ["no token", await call("GET", "/api/crm/v1/events")],
      ["list", await call("GET", "/api/crm/v1/events", { headers: { authorization: `Bearer ${token}` } })],
      ["bad json", await call("POST", "/auth/login", { headers: { "content-type": "application/json" }, body: "{" })],
      ["415", await call("POST", "/auth/login", { headers: { "content-type": "text/plain" }, body: "hi" })],
      // Fastify answers a URL it cannot decode before any hook runs (found by the fuzzer)
      ["undecodable URL", await call("GET", "/Resources/%FF%FE")],
      ["logout", await call("POST", "/auth/logout", { headers: { authorization: `Bearer ${token}` } })],
    ];
    const ids = new Set<string>();
    for (const [label, response] of responses) {
      expect(response.headers["x-content-type-options"], label).toBe("nosniff");
      const id = response.headers["x-request-id"];
      expect(typeof id, label).toBe("string");
      expect(id, label).toMatch(/^[0-9a-f-]{36}$/);
      ids.add(String(id));
      expect(response.headers["x-frame-options"], label).toBe("DENY");
      expect(response.headers["content-security-policy"], label).toContain("default-src 'none'");
      expect(response.body, label).not.toMatch(/\n\s+at /);
    }
    expect(ids.size).toBe(responses.length);
  });

  it("ignores a client-sent x-request-id and uses its own", async () => {
    const response = await call("GET", "/health", { headers: { "x-request-id": "spoofed\u0041" } });
    expect(response.headers["x-request-id"]).not.toBe("spoofedA");
  });

  it("a problem document's requestId equals the x-request-id header", async () => {
    const cases = [
      await call("GET", "/no/such/route"),
      await call("GET", "/auth/isLogged"),
      await call("POST", "/auth/login", {
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ userName: "ghost", password: "whatever it is, long enough" }),
      }),
    ];
    problemOf(cases[0]!, 404, "not_found");
    problemOf(cases[1]!, 401, "token_missing");
    problemOf(cases[2]!, 401, "invalid_credentials");
    for (const response of cases) {
      const problem = JSON.parse(response.body);
      expect(problem.requestId).toBeTruthy();
      expect(problem.requestId).toBe(response.headers["x-request-id"]);
    }
  });

  it("answers an unknown route with a 404 problem document, not an HTML page", async () => {
    const response = await call("GET", "/api/crm/v2/events");
    const problem = problemOf(response, 404, "not_found");
    expect(problem.detail).toContain("/api/crm/v2/events");
  });
});
