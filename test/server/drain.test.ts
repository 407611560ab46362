/**
 * A request that reaches a kept-alive connection while the server drains (spec: graceful
 * shutdown) is served and told the connection closes; it never gets a body outside the OpenAPI
 * document. The order is made certain on a raw socket: a login is under way when the close
 * begins, and a second request follows it on the same connection once the port is closed.
 */
import { expect, it } from "vitest";
import { holdLogin, statusLines } from "../helpers/held-request.js";
import { ADMIN_PASSWORD, ADMIN_USER, startTestServer } from "../helpers/server.js";

it("serves a request that arrives on a kept-alive connection during the drain, with Connection: close", async () => {
  const server = await startTestServer();
  let closing: Promise<void> | undefined;
  try {
    const url = await server.app.listen({ port: 0, host: "127.0.0.1" });
    const login = await holdLogin(url, ADMIN_USER, ADMIN_PASSWORD);
    closing = server.app.close();
    while (server.app.server.listening) await new Promise((next) => setImmediate(next));
    const received = await login.finish("GET /health HTTP/1.1\r\nHost: held\r\n\r\n");

    expect(statusLines(received)).toEqual(["HTTP/1.1 100", "HTTP/1.1 200", "HTTP/1.1 200"]);
    const health = received.slice(received.lastIndexOf("HTTP/1.1 "));
    expect(health).toMatch(/\r\nconnection: close\r\n/i);
    expect(health).toMatch(/\r\n\r\n\{"status":"ok"/);
    await closing;
  } finally {
    await (closing ?? server.app.close()).catch(() => undefined);
    await server.close().catch(() => undefined);
  }
});
