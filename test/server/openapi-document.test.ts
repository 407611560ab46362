/**
 * The OpenAPI document as tools we did not write read it: @apidevtools/swagger-parser validates
 * it against the OpenAPI 3.1 schema, and Redocly's linter holds it to its recommended rules
 * (redocly.yaml), with no error and no warning. Then what the document says of the errors,
 * media types and security of every operation, and that the answer checker the server tests run
 * (helpers/openapi-check.ts) does refuse an answer the document does not describe.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import { execa } from "execa";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_STATUS, type ErrorCode } from "../../src/contract/errors.js";
import { allRoutes } from "../../src/contract/index.js";
import { ROOT } from "../helpers/cli.js";
import {
  checkAnswers,
  OpenApiChecker,
  type OpenApiDocument,
  recordedAnswersOutside,
} from "../helpers/openapi-check.js";
import { bearer, loginToken, startTestServer, type TestServer } from "../helpers/server.js";

const PUBLIC_URL = "https://bizctl.test/api";
const REDOCLY = join(ROOT, "node_modules", "@redocly", "cli", "bin", "cli.js");
/** where the document is linted from: the path redocly's ignore file (.redocly.lint-ignore.yaml) names */
const LINTED = join(ROOT, "test-artifacts", "openapi.json");

type Json = Record<string, unknown>;
interface Operation {
  operationId: string;
  security?: Json[];
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, unknown> };
  responses: Record<
    string,
    {
      headers?: Record<string, { required?: boolean }>;
      content?: Record<string, unknown>;
      "x-problem-codes"?: string[];
    }
  >;
}

let server: TestServer;
let documentText: string;
let document: OpenApiDocument & { servers?: { url: string }[]; components: Json };

const operations = () =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ path, method, operation: operation as unknown as Operation })),
  );
const operation = (id: string) => {
  const found = operations().find((o) => o.operation.operationId === id);
  if (!found) throw new Error(`no operation ${id}`);
  return found.operation;
};

beforeAll(async () => {
  server = await startTestServer({ publicUrl: `${PUBLIC_URL}/` });
  const response = await server.app.inject({ method: "GET", url: "/openapi.json" });
  expect(response.statusCode).toBe(200);
  documentText = response.body;
  document = JSON.parse(documentText);
});
afterAll(async () => server?.close());

describe("independent validators", () => {
  it("@apidevtools/swagger-parser validates it as OpenAPI 3.1", async () => {
    // validate() dereferences in place: a copy
    const api = (await SwaggerParser.validate(JSON.parse(documentText))) as { openapi: string };
    expect(api.openapi).toBe("3.1.0");
  });

  it("Redocly's recommended rules find no error and no warning", async () => {
    await mkdir(join(ROOT, "test-artifacts"), { recursive: true });
    await writeFile(LINTED, documentText);
    const lint = await execa(
      process.execPath,
      [REDOCLY, "lint", LINTED, "--config", join(ROOT, "redocly.yaml"), "--format", "json"],
      {
        cwd: ROOT,
        reject: false,
        env: { REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
      },
    );
    const report = JSON.parse(lint.stdout) as {
      totals: { errors: number; warnings: number; ignored: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    // the service endpoints that take no input, and so answer no 4xx of their own (the ignore file)
    expect(report.totals.ignored).toBe(6);
    expect(lint.exitCode).toBe(0);
  });
});

describe("what the document says", () => {
  it("names the public URL as its server; without one, the server it was fetched from", async () => {
    expect(document.servers).toEqual([{ url: PUBLIC_URL }]);
    const local = await startTestServer();
    try {
      const doc = (await local.app.inject({ method: "GET", url: "/openapi.json" })).json() as Json;
      expect(doc.servers).toEqual([{ url: "/" }]);
    } finally {
      await local.close();
    }
  });

  it("documents every operation of the contract, once", () => {
    const ids = operations().map((o) => o.operation.operationId);
    expect([...ids].sort()).toEqual(allRoutes.map((route) => route.id).sort());
  });

  it("lists each error status with the problem codes that answer with it, by the server's own table", () => {
    for (const { operation: op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        for (const code of response["x-problem-codes"] ?? []) {
          expect(ERROR_STATUS[code as ErrorCode], `${op.operationId} ${status} ${code}`).toBe(Number(status));
        }
        if (response["x-problem-codes"]) {
          // the SCIM endpoints answer their errors as SCIM error bodies (RFC 7644 section 3.12)
          const scim = allRoutes.find((route) => route.id === op.operationId)?.scim === "wire";
          expect(Object.keys(response.content ?? {}), `${op.operationId} ${status}`).toContain(
            scim ? "application/scim+json" : "application/problem+json",
          );
        }
      }
      expect(op.responses["500"]?.["x-problem-codes"], op.operationId).toEqual(["internal_error"]);
    }
  });

  it("derives the common errors from the access rule, the schemas, the path and the rate limit", () => {
    const codesOf = (id: string, status: number) => operation(id).responses[String(status)]?.["x-problem-codes"];
    // a credential is needed: 401 with every refusal of one, 503 when the store that checks it is away
    expect(codesOf("events.list", 401)).toEqual(expect.arrayContaining(["token_missing", "oauth_signature_invalid"]));
    expect(codesOf("events.list", 503)).toEqual(["service_unavailable"]);
    // a role is needed (members do not write users' sessions), a temporary password is not enough,
    // nor a login that --require-mfa confines to enrolling a second factor
    expect(codesOf("resources.sessions.list", 403)).toEqual([
      "password_change_required",
      "mfa_enrollment_required",
      "forbidden",
    ]);
    // every role, during a first login and an enrollment too, and no account managed: nothing to forbid
    expect(codesOf("auth.isLogged", 403)).toBeUndefined();
    expect(codesOf("auth.mfa.totp.enroll", 403)).toEqual(["password_change_required", "forbidden"]);
    // a body: its size and its media type
    expect(codesOf("events.create", 413)).toEqual(["payload_too_large"]);
    expect(codesOf("events.create", 415)).toEqual(["unsupported_media_type"]);
    // a path parameter names what may not exist
    expect(codesOf("events.get", 404)).toEqual(["not_found"]);
    expect(codesOf("events.list", 404)).toBeUndefined();
    // If-Match on the writes of what has an ETag; If-None-Match and 304 on its read
    expect(codesOf("events.update", 412)).toEqual(["precondition_failed"]);
    expect(codesOf("events.create", 412)).toBeUndefined();
    expect(operation("events.update").parameters?.map((p) => p.name)).toContain("If-Match");
    expect(operation("events.get").parameters?.map((p) => p.name)).toContain("If-None-Match");
    expect(operation("events.get").responses["304"]?.headers?.ETag?.required).toBe(true);
    // rate limited by the server (not a contract attribute): login and the reset request
    expect(codesOf("auth.login", 429)).toEqual(["rate_limited", "account_locked"]);
    expect(codesOf("auth.renewPassword", 429)).toEqual(["rate_limited"]);
    expect(codesOf("auth.resetPassword", 429)).toBeUndefined();
    // and what an entry declares itself
    expect(codesOf("events.create", 409)).toEqual(["conflict"]);
  });

  it("gives the real media types: form-encoded OAuth credentials, HTML pages, redirects with Location", () => {
    const get = operation("oauth.get");
    expect(Object.keys(get.responses["200"]?.content ?? {}).sort()).toEqual([
      "application/json",
      "application/x-www-form-urlencoded",
      "text/html",
    ]);
    expect(Object.keys(get.responses["400"]?.content ?? {}).sort()).toEqual(["application/problem+json", "text/html"]);
    for (const status of ["302", "303"]) {
      expect(get.responses[status]?.headers?.Location?.required, status).toBe(true);
      expect(get.responses[status]?.content, status).toBeUndefined();
    }
    expect(Object.keys(operation("oauth.post").requestBody?.content ?? {})).toEqual([
      "application/x-www-form-urlencoded",
    ]);
    expect(Object.keys(operation("auth.resetPasswordPage").responses["200"]?.content ?? {})).toEqual(["text/html"]);
    expect(operation("events.create").responses["201"]?.headers?.Location?.required).toBe(true);
  });

  it("declares both security schemes; public operations need none, and account management takes no OAuth", () => {
    const schemes = (document.components.securitySchemes ?? {}) as Record<string, Json>;
    expect(schemes.bearer).toMatchObject({ type: "http", scheme: "bearer", bearerFormat: "JWT" });
    expect(schemes.oauth1).toMatchObject({ type: "http", scheme: "OAuth" });
    for (const route of allRoutes) {
      const security = operation(route.id).security;
      if (route.access.public) expect(security, route.id).toEqual([]);
      else if (route.access.managesAccount) expect(security, route.id).toEqual([{ bearer: [] }]);
      else expect(security, route.id).toEqual([{ bearer: [] }, { oauth1: [] }]);
    }
  });
});

describe("the answer checker the server tests run", () => {
  let checker: OpenApiChecker;
  let token: string;
  beforeAll(async () => {
    checker = new OpenApiChecker(JSON.parse(documentText));
    token = await loginToken(server.app, server.admin.userName, server.admin.password);
  });

  const exchange = async (method: "GET" | "POST", url: string, headers: Record<string, string> = {}) => {
    const response = await server.app.inject({ method, url, headers });
    return { method, url, status: response.statusCode, headers: response.headers, body: response.body };
  };

  it("passes the answers the document describes", async () => {
    expect(checker.check(await exchange("GET", "/api/crm/v1/events", bearer(token)))).toBeUndefined();
    expect(checker.check(await exchange("GET", "/api/crm/v1/events"))).toBeUndefined();
    expect(checker.check(await exchange("GET", "/resetPassword?token=x"))).toBeUndefined();
    // an alias of the contract, hidden from the document, and the router's way with case and slashes
    expect(checker.check(await exchange("GET", "/auth/resetPassword"))).toBeUndefined();
    expect(checker.check(await exchange("GET", "/API/crm/v1/events/", bearer(token)))).toBeUndefined();
    // the answers of no operation: no route, another method, OPTIONS
    expect(checker.check(await exchange("GET", "/no/such/path"))).toBeUndefined();
    expect(checker.check(await exchange("POST", "/health"))).toBeUndefined();
  });

  it("refuses a status, a media type, a body or a problem code the operation does not document", async () => {
    const list = await exchange("GET", "/api/crm/v1/events", bearer(token));
    expect(checker.check({ ...list, status: 418 })).toMatch(/does not document status 418/);
    expect(checker.check({ ...list, headers: { ...list.headers, "content-type": "text/plain" } })).toMatch(
      /not text\/plain/,
    );
    expect(checker.check({ ...list, body: JSON.stringify({ data: "none" }) })).toMatch(/does not match its schema/);
    const refused = await exchange("GET", "/api/crm/v1/events");
    expect(
      checker.check({ ...refused, body: refused.body.replace('"code":"token_missing"', '"code":"conflict"') }),
    ).toMatch(/answers code conflict/);
    const created = {
      method: "POST",
      url: "/api/crm/v1/events",
      status: 201,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: "x" }),
    };
    expect(checker.check(created)).toMatch(/lacks its required header Location/);
    expect(checker.check({ ...list, method: "PATCH", status: 200 })).toMatch(/does not describe/);
  });

  it("reports an answer a document leaves out", async () => {
    // a document that forgets the 401 of events.list: the real answer to an anonymous list is then outside it
    const doc = JSON.parse(documentText) as OpenApiDocument;
    delete doc.paths["/api/crm/v1/events"]!.get!.responses["401"];
    const forgetful = new OpenApiChecker(doc);
    expect(forgetful.check(await exchange("GET", "/api/crm/v1/events"))).toMatch(
      /events\.list does not document status 401/,
    );
  });

  it("fails the inject that received an answer outside the app's document", async () => {
    const app = Fastify();
    const doc = {
      openapi: "3.1.0",
      info: { title: "t", version: "1" },
      paths: { "/thing": { get: { operationId: "thing", responses: { "200": { description: "ok" } } } } },
    };
    app.decorate("swagger", () => doc);
    app.get("/thing", async (_request, reply) => reply.status(Number(_request.headers["x-status"] ?? 200)).send());
    await app.ready();
    // failing, not listing, whatever OPENAPI_CHECK_LOG says for the rest of the run
    const listing = process.env.OPENAPI_CHECK_LOG;
    delete process.env.OPENAPI_CHECK_LOG;
    try {
      checkAnswers(app);
      expect((await app.inject({ method: "GET", url: "/thing" })).statusCode).toBe(200);
      await expect(app.inject({ method: "GET", url: "/thing", headers: { "x-status": "409" } })).rejects.toThrow(
        /answer outside the OpenAPI document: thing does not document status 409/,
      );
    } finally {
      if (listing !== undefined) process.env.OPENAPI_CHECK_LOG = listing;
      await app.close();
    }
  });

  it("fails the teardown of an app whose socket sent an answer outside its document", async () => {
    const app = Fastify();
    app.decorate("swagger", () => ({
      openapi: "3.1.0",
      info: { title: "t", version: "1" },
      paths: { "/thing": { get: { operationId: "thing", responses: { "200": { description: "ok" } } } } },
    }));
    app.get("/thing", async (_request, reply) => reply.status(Number(_request.headers["x-status"] ?? 200)).send());
    const listing = process.env.OPENAPI_CHECK_LOG;
    delete process.env.OPENAPI_CHECK_LOG;
    try {
      const answers = checkAnswers(app);
      const url = await app.listen({ port: 0, host: "127.0.0.1" });
      expect((await fetch(`${url}/thing`)).status).toBe(200);
      answers.assertSocketAnswersDocumented();
      expect((await fetch(`${url}/thing`, { headers: { "x-status": "409" } })).status).toBe(409);
      expect(() => answers.assertSocketAnswersDocumented()).toThrow(/thing does not document status 409/);
    } finally {
      if (listing !== undefined) process.env.OPENAPI_CHECK_LOG = listing;
      await app.close();
    }
  });

  it("names the answers a server process recorded that the document does not describe", async () => {
    const health = { method: "GET", url: "/health", headers: { "content-type": "application/json" } };
    const recorded = [
      { ...health, status: 200, body: '{"status":"ok"}', cut: false },
      // an absolute-form target is read as its path; a body too long to keep is not checked
      { ...health, url: "http://elsewhere.example/health", status: 200, body: "", cut: true },
      { ...health, status: 201, body: '{"status":"ok"}', cut: false },
    ];
    const problems = await recordedAnswersOutside(recorded.map((line) => JSON.stringify(line)).join("\n"));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/does not document status 201/);
  });
});
