import { beforeAll, describe, expect, it } from "vitest";
import { createEvent, problemOf, useTestServer } from "../helpers/server.js";

const EVENTS = "/api/crm/v1/events";
const VALID = { name: "Valid", startsAt: "2027-04-01T10:00:00Z" };

describe("events: bad input gets a 4xx problem document and changes no data", () => {
  const server = useTestServer();
  beforeAll(async () => {
    for (const code of ["Keep-1", "Keep-2", "Keep-3"]) {
      await createEvent(server.call, { code, ...VALID, description: `row ${code}` });
    }
  });

  const rows = () => server.app.services.store.db.selectFrom("events").selectAll().orderBy("code_key").execute();
  const create = (payload: object) => server.call("POST", EVENTS, payload);
  const raw = (method: "POST" | "PUT", url: string, body: string | Buffer, contentType = "application/json") =>
    server.app.inject({ method, url, headers: { ...server.auth, "content-type": contentType }, payload: body });

  /** runs `act` and asserts that the events table is byte-for-byte the same afterwards */
  async function unchanged(act: () => Promise<void>): Promise<void> {
    const before = await rows();
    await act();
    expect(await rows()).toEqual(before);
  }

  it("refuses endsAt before startsAt with 400 naming /endsAt", async () => {
    await unchanged(async () => {
      const problem = problemOf(
        await create({
          code: "Backwards",
          name: "b",
          startsAt: "2027-04-02T10:00:00Z",
          endsAt: "2027-04-01T10:00:00Z",
        }),
        400,
        "validation_failed",
      );
      expect(problem.errors).toContainEqual(expect.objectContaining({ path: "/endsAt" }));
      // and on replacement
      problemOf(
        await server.app.inject({
          method: "PUT",
          url: `${EVENTS}/Keep-1`,
          headers: server.auth,
          payload: { name: "b", startsAt: "2027-04-02T10:00:00Z", endsAt: "2027-04-02T09:59:59Z" },
        }),
        400,
        "validation_failed",
      );
    });
    // equal start and end is fine
    const same = await create({
      code: "Instant",
      name: "i",
      startsAt: "2027-04-02T10:00:00Z",
      endsAt: "2027-04-02T12:00:00+02:00",
    });
    expect(same.statusCode).toBe(201);
  });

  it("refuses customFields over 16 KiB with 400 naming /customFields; 16 KiB exactly is accepted", async () => {
    // {"blob":"…"} is 11 bytes of JSON around the string
    const overhead = JSON.stringify({ blob: "" }).length;
    await unchanged(async () => {
      const problem = problemOf(
        await create({ code: "Huge-Custom", ...VALID, customFields: { blob: "x".repeat(16 * 1024 - overhead + 1) } }),
        400,
        "validation_failed",
      );
      expect(problem.errors).toContainEqual(expect.objectContaining({ path: "/customFields" }));
    });
    const limit = await create({
      code: "Full-Custom",
      ...VALID,
      customFields: { blob: "x".repeat(16 * 1024 - overhead) },
    });
    expect(limit.statusCode).toBe(201);
  });

  it("refuses an unknown field with 400 and errors[].path naming it", async () => {
    await unchanged(async () => {
      const problem = problemOf(
        await create({ code: "Unknown-Field", ...VALID, colour: "red" }),
        400,
        "validation_failed",
      );
      expect(problem.errors).toContainEqual({ path: "/colour", message: expect.stringContaining("colour") });
      const nested = problemOf(
        await create({ code: "Unknown-Nested", ...VALID, attendees: [{ name: "a", email: "a@example.com", age: 3 }] }),
        400,
        "validation_failed",
      );
      expect(nested.errors).toContainEqual(expect.objectContaining({ path: "/attendees/0/age" }));
    });
  });

  it.each([
    ["a missing name", { startsAt: "2027-04-01T10:00:00Z" }, "/name"],
    ["a missing startsAt", { name: "x" }, "/startsAt"],
    ["a startsAt that is not RFC 3339", { name: "x", startsAt: "tomorrow" }, "/startsAt"],
    ["a wrongly typed allDay", { ...VALID, allDay: "yes" }, "/allDay"],
    ["a code with a space", { ...VALID, code: "has space" }, "/code"],
    ["a code longer than 64", { ...VALID, code: "c".repeat(65) }, "/code"],
    [
      "an attendee without a valid email",
      { ...VALID, attendees: [{ name: "a", email: "not-an-email" }] },
      "/attendees/0/email",
    ],
    ["tags that are not strings", { ...VALID, tags: [1, 2] }, "/tags/0"],
  ])("refuses %s with 400 naming the field", async (_label, payload, path) => {
    await unchanged(async () => {
      const problem = problemOf(await create(payload), 400, "validation_failed");
      expect(problem.errors?.map((e) => e.path)).toContain(path);
    });
  });

  it.each([
    ["malformed JSON", '{"name": "x", "startsAt": '],
    ["trailing garbage", '{"name":"x","startsAt":"2027-04-01T10:00:00Z"} x'],
    ["a JSON array", "[]"],
    ["a JSON string", '"event"'],
    ["a __proto__ key", '{"name":"x","startsAt":"2027-04-01T10:00:00Z","__proto__":{"admin":true}}'],
    // was 500: storing customFields overflowed the stack (found by the fuzzer)
    [
      "customFields 10,000 levels deep",
      `{"name":"x","startsAt":"2027-04-01T10:00:00Z","customFields":${'{"a":'.repeat(10_000)}1${"}".repeat(10_001)}`,
    ],
    ["a body 65 levels deep", `${"[".repeat(65)}${"]".repeat(65)}`],
  ])("refuses %s with 400 validation_failed", async (_label, body) => {
    await unchanged(async () => {
      problemOf(await raw("POST", EVENTS, body), 400, "validation_failed");
      problemOf(await raw("PUT", `${EVENTS}/Keep-1`, body), 400, "validation_failed");
    });
  });

  it("refuses an empty JSON body with 400", async () => {
    await unchanged(async () => {
      problemOf(await raw("POST", EVENTS, ""), 400, "validation_failed");
    });
  });

  it("refuses invalid UTF-8 bytes in a JSON body with 400 and does not store replacement characters", async () => {
    const prefix = Buffer.from('{"code":"Bad-Utf8","name":"caf');
    const suffix = Buffer.from('","startsAt":"2027-04-01T10:00:00Z"}');
    for (const bad of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xe9]]) {
      await unchanged(async () => {
        const problem = problemOf(
          await raw("POST", EVENTS, Buffer.concat([prefix, Buffer.from(bad), suffix])),
          400,
          "validation_failed",
        );
        expect(problem.detail).toMatch(/UTF-8/);
      });
    }
    problemOf(
      await server.app.inject({ method: "GET", url: `${EVENTS}/Bad-Utf8`, headers: server.auth }),
      404,
      "not_found",
    );
    // the same text, properly encoded, is accepted
    const good = await raw("POST", EVENTS, Buffer.concat([prefix, Buffer.from("é"), suffix]));
    expect(good.statusCode).toBe(201);
    expect(good.json().name).toBe("café");
  });

  it("refuses a 2 MiB body with 413 payload_too_large", async () => {
    await unchanged(async () => {
      const body = JSON.stringify({ code: "Too-Big", ...VALID, description: "d".repeat(2 * 1024 * 1024) });
      problemOf(await raw("POST", EVENTS, body), 413, "payload_too_large");
      problemOf(await raw("PUT", `${EVENTS}/Keep-1`, body), 413, "payload_too_large");
    });
  });

  it.each(["text/plain", "application/x-www-form-urlencoded", "application/xml", "multipart/form-data; boundary=x"])(
    "refuses a %s body with 415 unsupported_media_type",
    async (contentType) => {
      await unchanged(async () => {
        const body = JSON.stringify({ code: "Plain-Text", ...VALID });
        problemOf(await raw("POST", EVENTS, body, contentType), 415, "unsupported_media_type");
        problemOf(await raw("PUT", `${EVENTS}/Keep-1`, body, contentType), 415, "unsupported_media_type");
      });
    },
  );

  it("accepts application/json with a charset parameter", async () => {
    const response = await raw(
      "POST",
      EVENTS,
      JSON.stringify({ code: "With-Charset", ...VALID }),
      "application/json; charset=utf-8",
    );
    expect(response.statusCode).toBe(201);
  });

  it("serves /API/crm/v1/Events/ and trailing-slash spellings of the same routes", async () => {
    const created = await server.app.inject({
      method: "POST",
      url: "/API/crm/v1/Events/",
      headers: server.auth,
      payload: { code: "Spelled", ...VALID },
    });
    expect(created.statusCode).toBe(201);
    expect(created.headers.location).toBe(`${EVENTS}/Spelled`);
    for (const url of ["/API/crm/v1/Events/", "/api/crm/v1/events/", "/Api/CRM/V1/EVENTS"]) {
      const list = await server.app.inject({ method: "GET", url, headers: server.auth });
      expect(list.statusCode, url).toBe(200);
      expect(list.json().data.map((e: { code: string }) => e.code)).toContain("Spelled");
    }
    for (const url of [`${EVENTS}/Spelled/`, "/API/crm/v1/Events/Spelled", "/API/CRM/v1/events/spelled/"]) {
      const one = await server.app.inject({ method: "GET", url, headers: server.auth });
      expect(one.statusCode, url).toBe(200);
      // the code keeps the case it was created with, whatever the path spelling
      expect(one.json().code).toBe("Spelled");
    }
    const replaced = await server.app.inject({
      method: "PUT",
      url: "/API/crm/v1/Events/SPELLED/",
      headers: server.auth,
      payload: { code: "Spelled", name: "Respelled", startsAt: VALID.startsAt },
    });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json()).toMatchObject({ code: "Spelled", name: "Respelled" });
    const deleted = await server.app.inject({
      method: "DELETE",
      url: "/API/crm/v1/Events/Spelled/",
      headers: server.auth,
    });
    expect(deleted.statusCode).toBe(204);
  });

  it("treats SQL metacharacters in a code as data: 400 or 404, never 5xx, and the table keeps its rows", async () => {
    const hostile = ["x'; drop table events;--", "x' OR '1'='1", '" OR 1=1 --', "Keep-1' --", "%", "_", "Keep%", "*"];
    await unchanged(async () => {
      for (const code of hostile) {
        const path = `${EVENTS}/${encodeURIComponent(code)}`;
        for (const method of ["GET", "PUT", "DELETE"] as const) {
          const response = await server.app.inject({
            method,
            url: path,
            headers: server.auth,
            ...(method === "PUT" && { payload: { name: "pwned", startsAt: VALID.startsAt } }),
          });
          expect([400, 404], `${method} ${code}: ${response.body}`).toContain(response.statusCode);
          expect(response.headers["content-type"]).toMatch(/^application\/problem\+json/);
        }
        // "_" is a legal code (and a LIKE wildcard): it is simply not there; the others are refused
        if (code !== "_") problemOf(await create({ code, ...VALID }), 400, "validation_failed");
      }
      for (const query of [
        "order=name;drop table events",
        "order=name%27--",
        "fields=name,code%27);drop table events;--",
        "page=1;drop",
      ]) {
        problemOf(
          await server.app.inject({ method: "GET", url: `${EVENTS}?${query}`, headers: server.auth }),
          400,
          "validation_failed",
        );
      }
    });
    const list = await server.app.inject({ method: "GET", url: `${EVENTS}?pagesize=100`, headers: server.auth });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((e: { code: string }) => e.code)).toEqual(
      expect.arrayContaining(["Keep-1", "Keep-2", "Keep-3"]),
    );
  });

  it("refuses writes without a token and changes nothing", async () => {
    await unchanged(async () => {
      problemOf(await server.app.inject({ method: "POST", url: EVENTS, payload: { ...VALID } }), 401, "token_missing");
      problemOf(
        await server.app.inject({ method: "PUT", url: `${EVENTS}/Keep-1`, payload: { ...VALID, name: "x" } }),
        401,
        "token_missing",
      );
      problemOf(await server.app.inject({ method: "DELETE", url: `${EVENTS}/Keep-1` }), 401, "token_missing");
    });
  });
});

describe("malformed URLs", () => {
  it("answer 400 problem documents, not Fastify's own error body", async () => {
    const { startTestServer } = await import("../helpers/server.js");
    const server = await startTestServer();
    try {
      for (const url of ["/api/crm/v1/events/%zz", "/Resources/%E0%A4%A"]) {
        const response = await server.app.inject({ method: "GET", url });
        expect(response.statusCode).toBe(400);
        expect(response.headers["content-type"]).toMatch(/^application\/problem\+json/);
        expect(response.json()).toMatchObject({ code: "validation_failed", status: 400 });
      }
    } finally {
      await server.close();
    }
  });
});
