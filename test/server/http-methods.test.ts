/**
 * RFC 9110 as HTTP clients and caches speak it, over real HTTP: 405 with Allow for another method
 * on a routed path, OPTIONS, HEAD wherever GET works, conditional GETs (304) and conditional
 * writes (412).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN_PASSWORD,
  ADMIN_USER,
  bearer,
  loginToken,
  problemOf,
  startTestServer,
  type TestServer,
} from "../helpers/server.js";

describe("HTTP methods and conditional requests (RFC 9110)", () => {
  let server: TestServer;
  let base: string;
  let token: string;
  let etag: string;
  const EVENT = "/api/crm/v1/events/HTTP-1";

  beforeAll(async () => {
    server = await startTestServer();
    base = await server.app.listen({ port: 0, host: "127.0.0.1" });
    token = await loginToken(server.app, ADMIN_USER, ADMIN_PASSWORD);
    const created = await fetch(`${base}/api/crm/v1/events/`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json" },
      body: JSON.stringify({ code: "HTTP-1", name: "launch", startsAt: "2027-01-01T09:00:00Z" }),
    });
    expect(created.status).toBe(201);
    etag = created.headers.get("etag")!;
  });
  afterAll(async () => server?.close());

  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    fetch(`${base}${path}`, { method, headers: { ...bearer(token), ...headers }, ...(body !== undefined && { body }) });

  const wrongMethods = [
    { method: "DELETE", path: "/health", allow: "GET, HEAD, OPTIONS" },
    { method: "POST", path: "/auth/isLogged", allow: "GET, HEAD, OPTIONS" },
    { method: "PUT", path: "/api/crm/v1/events", allow: "GET, HEAD, POST, OPTIONS" },
    // a body of a type no route parses is still a wrong method, not a 415
    { method: "POST", path: "/Resources/some-id", allow: "GET, HEAD, PUT, PATCH, DELETE, OPTIONS", body: "<x/>" },
    { method: "PUT", path: "/oAuth", allow: "GET, HEAD, POST, OPTIONS" },
    { method: "GET", path: "/auth/login", allow: "POST, OPTIONS" },
    // a path of its own beside a parameter's (`/events/:code`): not the event `batch`, whatever the method
    { method: "GET", path: "/api/crm/v1/events/batch", allow: "POST, OPTIONS" },
    { method: "PATCH", path: "/API/CRM/V1/EVENTS/IMPORTS/", allow: "POST, OPTIONS" },
  ];

  it.each(wrongMethods)("answers $method $path with 405 and Allow: $allow", async ({ method, path, allow, body }) => {
    const response = await send(method, path, body ? { "content-type": "application/xml" } : {}, body);
    expect(response.headers.get("allow")).toBe(allow);
    const text = await response.text();
    problemOf(
      { statusCode: response.status, headers: Object.fromEntries(response.headers), body: text },
      405,
      "method_not_allowed",
    );
  });

  it.each(wrongMethods)("answers OPTIONS $path with 204 and the same Allow", async ({ path, allow }) => {
    const response = await send("OPTIONS", path);
    expect(response.status).toBe(204);
    expect(response.headers.get("allow")).toBe(allow);
    expect(await response.text()).toBe("");
  });

  it("keeps 404 for a path that is not routed, whatever the method", async () => {
    for (const method of ["GET", "PUT", "OPTIONS"]) {
      const response = await send(method, "/no/such/path");
      expect(response.status).toBe(404);
      expect(response.headers.get("allow")).toBeNull();
    }
  });

  it.each([
    { body: "a type nothing parses", type: "application/xml", text: "<x/>" },
    { body: "malformed JSON", type: "application/json", text: "{" },
    { body: "a malformed media type", type: "application/", text: "{}" },
  ])("answers a path that is not routed with 404 whatever its body: $body", async ({ type, text }) => {
    const response = await send("POST", "/no/such/path", { "content-type": type }, text);
    problemOf(
      { statusCode: response.status, headers: Object.fromEntries(response.headers), body: await response.text() },
      404,
      "not_found",
    );
  });

  it.each([
    { path: "/no/such/%ZZ", status: 404, code: "not_found" },
    { path: "/sessions/%ZZ", status: 404, code: "not_found" },
    { path: "/sessions/%C0%BC", status: 404, code: "not_found" },
    { path: "/Resources/x/sessions/%C0%BC", status: 400, code: "validation_failed" },
    { path: "/api/crm/v1/events/%ZZ", status: 400, code: "validation_failed" },
    { path: "/Resources/%ZZ", status: 400, code: "validation_failed" },
  ])(
    "answers a malformed escape in $path with $status: a path no route serves is not found",
    async ({ path, status, code }) => {
      const response = await send("DELETE", path);
      problemOf(
        { statusCode: response.status, headers: Object.fromEntries(response.headers), body: await response.text() },
        status,
        code,
      );
    },
  );

  it("answers HEAD as GET without the body", async () => {
    const get = await send("GET", EVENT);
    const head = await send("HEAD", EVENT);
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe(get.headers.get("etag"));
    expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(await get.text())));
    expect(await head.text()).toBe("");
  });

  const conditions = [
    { name: "the current ETag", value: () => etag, status: 304 },
    { name: "the weak form of it", value: () => `W/${etag}`, status: 304 },
    { name: "a list holding it", value: () => `"999", ${etag}`, status: 304 },
    { name: "*", value: () => "*", status: 304 },
    { name: "another ETag", value: () => '"999"', status: 200 },
  ];

  it.each(conditions)("answers GET and HEAD with If-None-Match: $name with $status", async ({ value, status }) => {
    for (const method of ["GET", "HEAD"]) {
      const response = await send(method, EVENT, { "if-none-match": value() });
      expect(response.status).toBe(status);
      expect(response.headers.get("etag")).toBe(etag);
      const body = await response.text();
      if (status === 304) {
        expect(body).toBe("");
        expect(response.headers.get("content-type")).toBeNull();
      } else if (method === "GET") expect(JSON.parse(body)).toMatchObject({ code: "HTTP-1" });
    }
  });

  it("answers a refused conditional GET as any refusal: no 304 without the right to read", async () => {
    const response = await fetch(`${base}${EVENT}`, { headers: { "if-none-match": "*" } });
    expect(response.status).toBe(401);
  });

  let written = 0;
  /** A record of its own for each case: its path and ETag. */
  const records = {
    event: async () => {
      const code = `WRITE-${++written}`;
      const path = `/api/crm/v1/events/${code}`;
      const created = await send(
        "POST",
        "/api/crm/v1/events/",
        { "content-type": "application/json" },
        JSON.stringify({ code, name: "launch", startsAt: "2027-01-01T09:00:00Z" }),
      );
      expect(created.status).toBe(201);
      return { path, etag: created.headers.get("etag")! };
    },
    user: async () => {
      const created = await send(
        "POST",
        "/Users",
        { "content-type": "application/scim+json" },
        JSON.stringify({ userName: `writer.${++written}`, displayName: "before" }),
      );
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      return { path: `/Users/${id}`, etag: created.headers.get("etag")! };
    },
  };
  const writes = [
    {
      write: "PUT an event",
      record: records.event,
      method: "PUT",
      body: { name: "after", startsAt: "2027-01-01T09:00:00Z" },
    },
    { write: "DELETE an event", record: records.event, method: "DELETE" },
    { write: "PUT a User", record: records.user, method: "PUT", body: { userName: "renamed", displayName: "after" } },
    {
      write: "PATCH a User",
      record: records.user,
      method: "PATCH",
      body: {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "replace", path: "displayName", value: "after" }],
      },
    },
    { write: "DELETE a User", record: records.user, method: "DELETE" },
  ];
  const writeConditions = [
    { name: "*", value: (_: string) => "*", status: 412 },
    { name: "the current ETag", value: (current: string) => current, status: 412 },
    { name: "a list holding its weak form", value: (current: string) => `"999", W/${current}`, status: 412 },
    { name: "another ETag", value: (_: string) => '"999"', status: "success" },
  ];
  const cases = writes.flatMap((w) => writeConditions.map((c) => ({ ...w, condition: c.name, ...c })));

  it.each(cases)("answers $write with If-None-Match: $condition with $status", async (c) => {
    const { path, etag: current } = await c.record();
    const contentType = path.startsWith("/Users") ? "application/scim+json" : "application/json";
    const response = await send(
      c.method,
      path,
      { "if-none-match": c.value(current), ...(c.body && { "content-type": contentType }) },
      c.body && JSON.stringify(c.body),
    );
    const after = await send("GET", path);
    if (c.status === 412) {
      const text = await response.text();
      const problem = JSON.parse(text) as { code: string; status: unknown };
      expect([response.status, problem.code]).toEqual([412, "precondition_failed"]);
      // nothing changed: the record is there, at the version it had
      expect([after.status, after.headers.get("etag")]).toEqual([200, current]);
    } else {
      expect(response.status).toBeLessThan(300);
      expect(after.headers.get("etag")).not.toBe(current);
    }
  });
});
