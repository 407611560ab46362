import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Where the metrics listener serves, and how to stop it. */
export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/**
 * The second listener of `--metrics-port`: `GET /metrics` in Prometheus' text format, nothing
 * else, never on the API's port (a scrape needs no credential, so the port is for the operator's
 * network only: 127.0.0.1 unless `--metrics-host` says otherwise).
 */
export async function listenForMetrics(
  scrape: () => Promise<{ contentType: string; body: string }>,
  host: string,
  port: number,
): Promise<MetricsListener> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? "").split("?")[0];
    if (path !== "/metrics" || (request.method !== "GET" && request.method !== "HEAD")) {
      response.writeHead(path === "/metrics" ? 405 : 404, { "content-type": "text/plain; charset=utf-8" });
      response.end(path === "/metrics" ? "GET /metrics\n" : "Not found: this listener serves GET /metrics only\n");
      return;
    }
    scrape().then(
      ({ contentType, body }) => {
        response.writeHead(200, { "content-type": contentType, "cache-control": "no-store" });
        response.end(request.method === "HEAD" ? undefined : body);
      },
      (error: unknown) => {
        response.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
        response.end(`The metrics could not be gathered: ${error instanceof Error ? error.message : String(error)}\n`);
      },
    );
  });
  // says what this server is to whatever inspects the process: the API's answers are held to the
  // OpenAPI document (the end-to-end tests' answer recorder), the metrics listener's are not the API's
  Object.defineProperty(server, Symbol.for("bizctl.metrics-listener"), { value: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
