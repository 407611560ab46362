/**
 * A TCP proxy on loopback in front of a real server, that a test can cut and restore: an outage
 * of the shared PostgreSQL for one app only, without touching the server itself.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  /** closes every connection and stops listening: the target looks down */
  cut(): Promise<void>;
  /** listens again on the same port */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server;
  const listen = (port: number) =>
    new Promise<number>((done, fail) => {
      server = createServer((client) => {
        const upstream = createConnection({ host: targetHost, port: targetPort });
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => {});
        }
        client.pipe(upstream).pipe(client);
      });
      server.once("error", fail);
      server.listen(port, "127.0.0.1", () => done((server.address() as { port: number }).port));
    });
  const stop = () =>
    new Promise<void>((done) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => done());
    });
  const port = await listen(0);
  return {
    port,
    cut: stop,
    restore: async () => {
      await listen(port);
    },
    close: stop,
  };
}
