import { connect } from "node:net";

/**
 * A login held in flight on a raw socket: its headers sent with `Expect: 100-continue`, its body
 * not yet. Once the 100 Continue has come back the server has the request under way, so a test
 * can close the server around it and know the request was in flight all along.
 */
export interface HeldRequest {
  /**
   * Sends the body, then `then` right behind it on the same connection (pipelined, so it is
   * there before the login's answer). Resolves with all the server wrote once the connection closes.
   */
  finish(then?: string): Promise<string>;
  destroy(): void;
}

export async function holdLogin(url: string, userName: string, password: string): Promise<HeldRequest> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let received = "";
  const closed = new Promise<string>((done) => socket.once("close", () => done(received)));
  socket.setEncoding("utf8").on("data", (chunk: string) => {
    received += chunk;
  });
  const body = JSON.stringify({ userName, password });
  socket.write(
    "POST /auth/login HTTP/1.1\r\nHost: held\r\nContent-Type: application/json\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
  );
  await new Promise<void>((done, fail) => {
    const check = () => {
      if (!received.startsWith("HTTP/1.1 100 Continue\r\n\r\n")) return;
      socket.off("data", check);
      done();
    };
    socket.on("data", check);
    closed.then((text) => fail(new Error(`the connection closed before 100 Continue:\n${text}`)));
  });
  return {
    finish: (then = "") => {
      // one write: the next request reaches the server with the body, while the login is still
      // under way, rather than after its answer, when a draining server may close the connection
      socket.write(body + then);
      return closed;
    },
    destroy: () => socket.destroy(),
  };
}

/** The status lines of the answers in what a server wrote on one connection. */
export const statusLines = (received: string): string[] => received.match(/HTTP\/1\.1 \d{3}/g) ?? [];
