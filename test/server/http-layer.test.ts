/**
 * What the HTTP layer refuses before any route runs (the parser, the body limit, the timeouts
 * against slow clients), written byte by byte over a raw TCP socket to a listening server: each
 * answer is a problem document, never Fastify's own `{"error","message","statusCode"}` body.
 */
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { ERROR_CODES, PROBLEM_CONTENT_TYPE } from "../../src/contract/errors.js";
import { useTestServer } from "../helpers/server.js";

interface RawAnswer {
  /** null when the server closed the connection without answering */
  status: number | null;
  headers: Record<string, string>;
  body: string;
}

/** Splits what came back on the socket into a status, headers and body. */
function parse(raw: string): RawAnswer {
  if (raw === "") return { status: null, headers: {}, body: "" };
  const end = raw.indexOf("\r\n\r\n");
  const [statusLine = "", ...lines] = raw.slice(0, end < 0 ? raw.length : end).split("\r\n");
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
  );
  return { status: Number(statusLine.split(" ")[1]), headers, body: end < 0 ? "" : raw.slice(end + 4) };
}

/**
 * Writes `chunks` on a fresh connection (with `gapMs` between them), then waits until the server
 * has sent a whole answer (as its Content-Length says) or closed the connection.
 */
function exchange(port: number, chunks: (string | Buffer)[], gapMs = 0): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = Buffer.alloc(0);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(parse(received.toString("utf8")));
    };
    socket.on("data", (data) => {
      received = Buffer.concat([received, data]);
      const answer = parse(received.toString("utf8"));
      const length = Number(answer.headers["content-length"]);
      if (answer.status !== null && Number.isFinite(length) && Buffer.byteLength(answer.body) >= length) finish();
    });
    socket.on("close", finish);
    // the server may close while the client still writes (a refused body): that is an answer too
    socket.on("error", (error: NodeJS.ErrnoException) =>
      error.code === "EPIPE" || error.code === "ECONNRESET" ? finish() : reject(error),
    );
    socket.on("connect", async () => {
      for (const chunk of chunks) {
        if (done || socket.destroyed) return;
        socket.write(chunk);
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
    });
  });
}

function expectProblem(answer: RawAnswer, status: number, code: string): void {
  expect(answer.status, answer.body).toBe(status);
  expect(answer.headers["content-type"]).toBe(`${PROBLEM_CONTENT_TYPE}; charset=utf-8`);
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  expect(body).toMatchObject({ status, code, type: `urn:bizctl:problem:${code}` });
  expect(ERROR_CODES).toContain(body.code);
  expect(body.requestId).toEqual(answer.headers["x-request-id"]);
  expect(body).not.toHaveProperty("statusCode");
}

// a short timeout, so that the slow clients are cut off within the test's patience
const HEADERS_TIMEOUT_MS = 400;
const REQUEST_TIMEOUT_MS = 800;

describe("the HTTP layer answers with problem documents over a real socket", () => {
  const server = useTestServer({
    headersTimeoutMs: HEADERS_TIMEOUT_MS,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    listen: true,
    login: false,
  });
  const port = () => Number(new URL(server.url).port);

  const refused: { name: string; chunks: string[]; status: number; code: string }[] = [
    {
      name: "a 30 KB header",
      chunks: [`GET /health HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${"a".repeat(30_000)}\r\n\r\n`],
      status: 431,
      code: "headers_too_large",
    },
    {
      name: "a garbage request line",
      chunks: ["HELLO? anyone there\r\n\r\n"],
      status: 400,
      code: "validation_failed",
    },
    {
      name: "a request line with no HTTP version",
      chunks: ["GET /health HTTP/9\r\nHost: localhost\r\n\r\n"],
      status: 400,
      code: "validation_failed",
    },
    {
      name: "a body declared over the 1 MiB limit",
      chunks: [
        "POST /auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n",
        `{"userName":"${"x".repeat(60_000)}`,
      ],
      status: 413,
      code: "payload_too_large",
    },
  ];

  it.each(refused)("$name: $status $code", async ({ chunks, status, code }) => {
    expectProblem(await exchange(port(), chunks), status, code);
  });

  it("still answers a well-formed request on the same server (the cases above broke nothing)", async () => {
    const answer = await exchange(port(), ["GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"]);
    expect(answer.status).toBe(200);
  });

  const slow: { name: string; chunks: string[]; gapMs: number }[] = [
    {
      // slowloris: one header line at a time, never the blank line that ends them
      name: "headers that never end",
      chunks: [
        "GET /health HTTP/1.1\r\n",
        "Host: localhost\r\n",
        ...Array.from({ length: 40 }, (_, i) => `X-${i}: a\r\n`),
      ],
      gapMs: 100,
    },
    {
      name: "a body that never arrives in full",
      chunks: [
        "POST /auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n",
        '{"user',
        ...Array.from({ length: 40 }, () => " "),
      ],
      gapMs: 100,
    },
  ];

  it.each(slow)(
    "a slow client ($name) gets 408 request_timeout and the connection closes",
    { timeout: 15_000 },
    async ({ chunks, gapMs }) => {
      const answer = await exchange(port(), chunks, gapMs);
      expectProblem(answer, 408, "request_timeout");
      expect(answer.headers.connection).toBe("close");
    },
  );
});
