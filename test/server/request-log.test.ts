/**
 * The one log line per request: its fields, and secrets in the URL masked (the hot path skips the
 * masking expression for URLs without a query value, so both kinds are checked).
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PASSWORD, ADMIN_USER, startTestServer, type TestServer } from "../helpers/server.js";

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  req?: { method: string; url: string; id: string; remoteAddress?: string };
  res?: { statusCode: number };
  responseTime?: number;
}

describe("the request log line", () => {
  let server: TestServer;
  let text = "";
  const lines = () =>
    text
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Line)
      .filter((line) => line.msg === "request completed");

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    });
    server = await startTestServer({ log: { level: "info", stream } });
  });
  afterAll(async () => server?.close());

  it("has the method, URL, request id, status and time of each request", async () => {
    const response = await server.app.inject({ method: "GET", url: "/health" });
    const line = lines().at(-1)!;
    expect(line).toMatchObject({
      level: 30,
      reqId: response.headers["x-request-id"],
      req: { method: "GET", url: "/health", id: response.headers["x-request-id"] },
      res: { statusCode: 200 },
    });
    expect(typeof line.responseTime).toBe("number");
  });

  it("masks tokens, OAuth tokens, verifiers and signatures in the query, and never logs a credential", async () => {
    const login = await server.app.inject({
      method: "POST",
      url: "/auth/login",
      payload: { userName: ADMIN_USER, password: ADMIN_PASSWORD },
    });
    const { token } = login.json() as { token: string };
    await server.app.inject({ method: "GET", url: "/resetPassword?token=s3cret-reset&x=1" });
    await server.app.inject({
      method: "GET",
      url: "/oAuth?oauth_token=s3cret-tok&oauth_verifier=s3cret-ver&oauth_signature=s3cret-sig&a=b",
    });
    await server.app.inject({ method: "GET", url: "/auth/isLogged", headers: { authorization: `Bearer ${token}` } });
    const urls = lines().map((line) => line.req?.url);
    expect(urls).toContain("/resetPassword?token=***&x=1");
    expect(urls).toContain("/oAuth?oauth_token=***&oauth_verifier=***&oauth_signature=***&a=b");
    expect(urls).toContain("/auth/isLogged");
    for (const secret of ["s3cret", token, ADMIN_PASSWORD]) expect(text).not.toContain(secret);
  });
});
