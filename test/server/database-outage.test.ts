import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";
import { ADMIN_PASSWORD, ADMIN_USER, problemOf, useTestServer } from "../helpers/server.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";

/**
 * PostgreSQL going away and coming back, seen by one app through a proxy it reaches the database
 * by: 503 problem documents with Retry-After while it is away, never a 500, and service again
 * without a restart once it is back.
 */
describe("while PostgreSQL is unreachable", () => {
  let database: { url: string; drop: () => Promise<void> };
  let proxy: TcpProxy;

  // runs after the server has closed (hooks after the last test run last to first)
  afterAll(async () => {
    await proxy?.close();
    await database?.drop();
  });
  const server = useTestServer(async () => {
    database = await createTestDatabase();
    const direct = new URL(database.url);
    proxy = await startTcpProxy(direct.hostname, Number(direct.port || 5432));
    const viaProxy = new URL(database.url);
    viaProxy.port = String(proxy.port);
    return { databaseUrl: viaProxy.toString(), secretKey: TEST_SECRET_KEY };
  });
  const call = server.call;

  const REQUESTS: { name: string; send: () => ReturnType<typeof call> }[] = [
    { name: "an authenticated read", send: () => call("GET", "/auth/isLogged") },
    { name: "an event list", send: () => call("GET", "/api/crm/v1/events") },
    {
      name: "a write",
      send: () => call("POST", "/api/crm/v1/events", { code: "OUTAGE", name: "x", startsAt: "2027-01-01T00:00:00Z" }),
    },
    {
      name: "a login",
      send: () =>
        server.app.inject({
          method: "POST",
          url: "/auth/login",
          payload: { userName: ADMIN_USER, password: ADMIN_PASSWORD },
        }),
    },
  ];

  it("answers 503 service_unavailable with Retry-After, and serves again once it is back", async () => {
    await proxy.cut();
    for (const { name, send } of REQUESTS) {
      const response = await send();
      problemOf(response, 503, "service_unavailable");
      expect(response.headers["retry-after"], name).toBe("5");
    }
    problemOf(await server.app.inject({ method: "GET", url: "/ready" }), 503, "service_unavailable");
    expect((await server.app.inject({ method: "GET", url: "/health" })).statusCode).toBe(200);

    await proxy.restore();
    expect((await call("GET", "/auth/isLogged")).statusCode).toBe(200);
    expect((await server.app.inject({ method: "GET", url: "/ready" })).statusCode).toBe(200);
    const created = await REQUESTS[2]!.send();
    expect(created.statusCode, created.body).toBe(201);
  });
});
