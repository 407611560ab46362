/**
 * The browser consent page enforces --require-mfa as the API does (issue 41): an owner whose role
 * requires a second factor and who has none approves no application on the password alone, and is
 * told to set one up. Over real HTTP, on SQLite and PostgreSQL.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { authHeader, createConsumer, parseFormBody, signer } from "../helpers/oauth.js";
import { STORES } from "../helpers/postgres.js";
import { insertUser, NEW_PASSWORD, overHttp, useTestServer } from "../helpers/server.js";
import { codeOf } from "../helpers/totp.js";

describe.each(STORES)("the consent page under --require-mfa on %s", (_store, start) => {
  const server = useTestServer({ listen: true, requireMfaRoles: ["admin"] }, start);
  let consumer: { key: string; secret: string };

  beforeAll(async () => {
    // the first admin enrolls, as it must before anything else
    const started = await server.call("POST", "/auth/mfa/totp");
    const verified = await server.call("POST", "/auth/mfa/totp/verify", {
      code: codeOf((started.json() as { secret: string }).secret),
    });
    expect(verified.statusCode, verified.body).toBe(200);
    consumer = await createConsumer(server.app, server.token, {
      name: "Partner",
      callbackUrls: ["https://partner.example/cb"],
    });
  });

  async function temporary(): Promise<string> {
    const url = `${server.url}/oAuth`;
    const answer = await overHttp(server.url, "POST", "/oAuth", {
      headers: {
        authorization: authHeader(signer(consumer), {
          method: "POST",
          url,
          data: { oauth_callback: "https://partner.example/cb" },
        }),
      },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    return parseFormBody(answer.body).oauth_token!;
  }

  async function approve(token: string, userName: string, password: string) {
    const page = await overHttp(server.url, "GET", `/oAuth/?oauth_token=${encodeURIComponent(token)}`, {
      headers: { accept: "text/html" },
    });
    expect(page.statusCode).toBe(200);
    const csrf = /name="csrf_token" value="([0-9a-f]+)"/.exec(page.body)?.[1] ?? "";
    return overHttp(server.url, "POST", "/oAuth/", {
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        oauth_token: token,
        csrf_token: csrf,
        userName,
        password,
        decision: "approve",
      }).toString(),
    });
  }

  it.each([
    { roles: ["admin" as const], approves: false },
    { roles: ["member" as const], approves: true },
  ])("a $roles.0 without a factor approves: $approves", async ({ roles, approves }) => {
    const user = await insertUser(server.app, {
      userName: `page-${crypto.randomUUID().slice(0, 8)}`,
      password: NEW_PASSWORD,
      roles,
    });
    const answer = await approve(await temporary(), user.userName, user.password);
    if (approves) {
      expect(answer.statusCode, answer.body).toBe(303);
      return;
    }
    expect(answer.statusCode, answer.body).toBe(403);
    expect(answer.headers.location).toBeUndefined();
    expect(answer.body).toMatch(/second factor/);
    expect(answer.body).toMatch(/nothing was approved/);
  });
});
