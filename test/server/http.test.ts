/**
 * The same contract over a real socket: what inject() cannot show (Content-Length and chunked
 * bodies, bytes on the wire, header sizes) and a full event round trip.
 */
import { Readable } from "node:stream";
import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PASSWORD, ADMIN_USER, problemOf, useTestServer } from "../helpers/server.js";

const EVENTS = "/api/crm/v1/events";

describe("events and auth over HTTP", () => {
  // logged in over the socket below
  const server = useTestServer({ listen: true, login: false });
  let token: string;
  beforeAll(async () => {
    const response = await fetch(`${server.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ userName: ADMIN_USER.toLowerCase(), password: ADMIN_PASSWORD }),
    });
    token = ((await response.json()) as { token: string }).token;
  });

  const call = (
    method: "GET" | "POST" | "PUT" | "DELETE",
    path: string,
    options: { headers?: Record<string, string>; body?: string | Buffer | Readable; auth?: boolean } = {},
  ) =>
    server.wire(method, path, {
      headers: {
        ...(options.auth !== false && { authorization: `Bearer ${token}` }),
        ...(options.body !== undefined && { "content-type": "application/json" }),
        ...options.headers,
      },
      body: options.body,
    });

  const count = async () => {
    const row = await server.app.services.store.db
      .selectFrom("events")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };

  it("runs an event through create, read, conditional replace and conditional delete", async () => {
    const created = await call("POST", `${EVENTS}/`, {
      body: JSON.stringify({ code: "Wire-1", name: "On the wire", startsAt: "2027-09-01T10:00:00Z", location: "HQ" }),
    });
    expect(created.statusCode).toBe(201);
    expect(created.headers.location).toBe(`${EVENTS}/Wire-1`);
    const etag = String(created.headers.etag);

    const read = await call("GET", String(created.headers.location));
    expect(read.statusCode).toBe(200);
    expect(read.headers.etag).toBe(etag);

    const stale = await call("PUT", `${EVENTS}/Wire-1`, {
      headers: { "if-match": '"0"' },
      body: JSON.stringify({ name: "Lost update", startsAt: "2027-09-01T10:00:00Z" }),
    });
    problemOf(stale, 412, "precondition_failed");
    expect(JSON.parse((await call("GET", `${EVENTS}/Wire-1`)).body).name).toBe("On the wire");

    const replaced = await call("PUT", `${EVENTS}/wire-1`, {
      headers: { "if-match": etag },
      body: JSON.stringify({ name: "Replaced", startsAt: "2027-09-01T10:00:00Z" }),
    });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.headers.etag).not.toBe(etag);
    expect(JSON.parse(replaced.body)).not.toHaveProperty("location");

    problemOf(await call("DELETE", `${EVENTS}/Wire-1`, { headers: { "if-match": etag } }), 412, "precondition_failed");
    const deleted = await call("DELETE", `${EVENTS}/Wire-1`, {
      headers: { "if-match": String(replaced.headers.etag) },
    });
    expect(deleted.statusCode).toBe(204);
    problemOf(await call("GET", `${EVENTS}/Wire-1`), 404, "not_found");
  });

  it("sends the Link header of a middle page", async () => {
    for (let i = 1; i <= 5; i++) {
      const response = await call("POST", EVENTS, {
        body: JSON.stringify({ code: `Page-${i}`, name: `p${i}`, startsAt: `2027-10-0${i}T10:00:00Z` }),
      });
      expect(response.statusCode).toBe(201);
    }
    const response = await call("GET", `${EVENTS}?pagesize=2&page=2`);
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ page: 2, pagesize: 2, total: 5, totalPages: 3 });
    const link = String(response.headers.link);
    for (const [rel, page] of [
      ["first", 1],
      ["prev", 1],
      ["next", 3],
      ["last", 3],
    ] as const) {
      expect(link).toMatch(new RegExp(`<${EVENTS}\\?[^>]*page=${page}[^>]*>; rel="${rel}"`));
    }
  });

  it("refuses a 2 MiB body with 413 payload_too_large, with Content-Length and chunked", async () => {
    const before = await count();
    const big = JSON.stringify({
      code: "Big",
      name: "big",
      startsAt: "2027-01-01T00:00:00Z",
      description: "x".repeat(2 * 1024 * 1024),
    });
    problemOf(await call("POST", EVENTS, { body: big }), 413, "payload_too_large");
    // no Content-Length: the limit applies while the stream arrives
    const chunks = Readable.from(
      (function* () {
        yield '{"code":"Big","name":"big","startsAt":"2027-01-01T00:00:00Z","description":"';
        for (let i = 0; i < 32; i++) yield "y".repeat(64 * 1024);
        yield '"}';
      })(),
    );
    problemOf(await call("POST", EVENTS, { body: chunks }), 413, "payload_too_large");
    expect(await count()).toBe(before);
    // the server is still serving
    expect((await call("GET", "/health", { auth: false })).statusCode).toBe(200);
  });

  it("refuses invalid UTF-8 on the wire with 400", async () => {
    const before = await count();
    const body = Buffer.concat([
      Buffer.from('{"code":"Latin1","name":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('","startsAt":"2027-01-01T00:00:00Z"}'),
    ]);
    problemOf(await call("POST", EVENTS, { body }), 400, "validation_failed");
    expect(await count()).toBe(before);
  });

  it("refuses malformed JSON and a text/plain body", async () => {
    const before = await count();
    problemOf(await call("POST", EVENTS, { body: '{"name":' }), 400, "validation_failed");
    problemOf(
      await call("POST", EVENTS, {
        headers: { "content-type": "text/plain" },
        body: JSON.stringify({ name: "plain", startsAt: "2027-01-01T00:00:00Z" }),
      }),
      415,
      "unsupported_media_type",
    );
    expect(await count()).toBe(before);
  });

  it("serves /API/crm/v1/Events/ and the auth paths in other spellings", async () => {
    expect((await call("GET", "/API/crm/v1/Events/")).statusCode).toBe(200);
    expect((await call("GET", "/api/crm/v1/events/")).statusCode).toBe(200);
    expect((await call("GET", "/AUTH/islogged/")).statusCode).toBe(200);
    expect((await call("GET", "/auth/isfirstlogin")).statusCode).toBe(200);
  });

  it("refuses a Bearer token over 8 KiB with 401 token_invalid", async () => {
    const { sub, jti } = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"));
    const big = (await server.app.services.keys.sign({ sub, jti, roles: Array(1200).fill("admin") }, 3600)).token;
    expect(big.length).toBeGreaterThan(8 * 1024);
    const response = await call("GET", "/auth/isLogged", { auth: false, headers: { authorization: `Bearer ${big}` } });
    problemOf(response, 401, "token_invalid");
    expect(response.headers["www-authenticate"]).toMatch(/^Bearer /);
  });

  it("never answers 5xx to a SQL metacharacter code on the wire", async () => {
    const before = await count();
    for (const method of ["GET", "PUT", "DELETE"] as const) {
      const response = await call(method, `${EVENTS}/${encodeURIComponent("x'; drop table events;--")}`, {
        ...(method === "PUT" && { body: JSON.stringify({ name: "n", startsAt: "2027-01-01T00:00:00Z" }) }),
      });
      expect([400, 404]).toContain(response.statusCode);
    }
    expect(await count()).toBe(before);
    expect(before).toBeGreaterThan(0);
  });
});
