import { beforeAll, describe, expect, it } from "vitest";
import { percentEncode } from "../../src/server/oauth1/signature.js";
import {
  authHeader,
  type Credentials,
  createConsumer,
  INJECT_BASE,
  parseFormBody,
  pinnedHeader,
  signer,
  type TestConsumer,
} from "../helpers/oauth.js";
import { loginToken, manualClock, problemOf, startTestServer, useTestServer } from "../helpers/server.js";

const OAUTH_URL = `${INJECT_BASE}/oAuth`;

describe("expiry (manual clock)", () => {
  const clock = manualClock();
  const server = useTestServer({ clock: clock.clock });
  let consumer: TestConsumer;
  beforeAll(async () => {
    consumer = await createConsumer(server.app, server.token);
  });

  const seconds = () => Math.floor(clock.clock().getTime() / 1000);
  const sign = (request: { method: string; url: string; data?: Record<string, string> }, token?: Credentials) =>
    pinnedHeader(consumer, request, token, { timestamp: seconds() });

  async function temporary(): Promise<Credentials> {
    const response = await server.app.inject({
      method: "POST",
      url: "/oAuth",
      headers: { authorization: sign({ method: "POST", url: OAUTH_URL, data: { oauth_callback: "oob" } }) },
    });
    const body = parseFormBody(response.body);
    return { token: body.oauth_token!, secret: body.oauth_token_secret! };
  }

  it("temporary credentials cannot be approved after 10 minutes", async () => {
    const temp = await temporary();
    clock.advance(601_000);
    const response = await server.app.inject({
      method: "GET",
      url: `/oAuth?oauth_token=${temp.token}`,
      headers: server.auth,
    });
    problemOf(response, 401, "oauth_token_invalid");
  });

  it("an approved verifier cannot be exchanged after 10 minutes", async () => {
    const temp = await temporary();
    const approval = await server.app.inject({
      method: "GET",
      url: `/oAuth?oauth_token=${temp.token}`,
      headers: server.auth,
    });
    const verifier = (approval.json() as { oauth_verifier: string }).oauth_verifier;
    clock.advance(601_000);
    const response = await server.app.inject({
      method: "POST",
      url: "/oAuth",
      headers: { authorization: sign({ method: "POST", url: OAUTH_URL, data: { oauth_verifier: verifier } }, temp) },
    });
    problemOf(response, 401, "oauth_token_invalid");
  });

  it("the server's clock decides the timestamp window, and old nonces are pruned", async () => {
    const temp = await temporary();
    const db = server.app.services.store.db;
    const nonces = async () => (await db.selectFrom("oauth_nonces").selectAll().execute()).length;
    expect(await nonces()).toBeGreaterThan(0);
    clock.advance(3600_000);
    // a fresh request, signed at the server's time, prunes what can no longer be replayed
    await temporary();
    expect(await nonces()).toBe(1);
    expect(temp.token).toBeTruthy();
  });
});

describe("server options", () => {
  it("accepts PLAINTEXT over plain HTTP only with allowPlaintextOverHttp", async () => {
    const server = await startTestServer({ allowPlaintextOverHttp: true });
    try {
      const admin = await loginToken(server.app, server.admin.userName, server.admin.password);
      const consumer = await createConsumer(server.app, admin);
      const header =
        `OAuth oauth_consumer_key="${consumer.key}", oauth_signature_method="PLAINTEXT", ` +
        `oauth_callback="oob", oauth_signature="${percentEncode(`${percentEncode(consumer.secret)}&`)}"`;
      const response = await server.app.inject({ method: "POST", url: "/oAuth", headers: { authorization: header } });
      expect(response.statusCode, response.body).toBe(200);
      const wrong = header.replace(/oauth_signature="[^"]*"/, 'oauth_signature="nope%26"');
      problemOf(
        await server.app.inject({ method: "POST", url: "/oAuth", headers: { authorization: wrong } }),
        401,
        "oauth_signature_invalid",
      );
    } finally {
      await server.close();
    }
  });

  it("signs against the configured public URL behind a proxy, not the Host header", async () => {
    const server = await startTestServer({ publicUrl: "https://API.example.com:443/bizctl/" });
    try {
      const admin = await loginToken(server.app, server.admin.userName, server.admin.password);
      const consumer = await createConsumer(server.app, admin);
      const send = (url: string) =>
        server.app.inject({
          method: "POST",
          url: "/oAuth",
          headers: {
            authorization: authHeader(signer(consumer), { method: "POST", url, data: { oauth_callback: "oob" } }),
          },
        });
      expect((await send("https://api.example.com/bizctl/oAuth")).statusCode).toBe(200);
      // signed for the address it reached (another instance, a proxy's inside): the cause is said
      const reached = problemOf(await send(OAUTH_URL), 401, "oauth_signature_invalid");
      expect(reached.detail).toContain(`made over ${OAUTH_URL}, the address this request reached`);
      expect(reached.detail).toContain("its public URL: https://api.example.com/bizctl/oAuth");
      // signed for neither: only that it does not match
      const neither = problemOf(await send("https://elsewhere.example.com/oAuth"), 401, "oauth_signature_invalid");
      expect(neither.detail).toMatch(/^The signature does not match the request/);
      // PLAINTEXT is fine when the public URL is HTTPS
      const plaintext =
        `OAuth oauth_consumer_key="${consumer.key}", oauth_signature_method="PLAINTEXT", ` +
        `oauth_callback="oob", oauth_signature="${percentEncode(`${percentEncode(consumer.secret)}&`)}"`;
      const response = await server.app.inject({
        method: "POST",
        url: "/oAuth",
        headers: { authorization: plaintext },
      });
      expect(response.statusCode, response.body).toBe(200);
    } finally {
      await server.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// a real socket

describe("the three legs over real HTTP, signed with oauth-1.0a", () => {
  // logged in over the socket in the test
  const server = useTestServer({ listen: true, login: false });

  it("gets token credentials, then reads /api/crm/v1/events with them", async () => {
    const login = await fetch(`${server.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ userName: server.admin.userName, password: server.admin.password }),
    });
    const owner = ((await login.json()) as { token: string }).token;
    const create = await fetch(`${server.url}/Resources`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${owner}` },
      body: JSON.stringify({ resourceType: "OAuthConsumer", name: "Wire", callbackUrls: ["http://127.0.0.1:9/cb"] }),
    });
    const created = (await create.json()) as { consumerKey: string; consumerSecret: string };
    const consumer = { key: created.consumerKey, secret: created.consumerSecret };
    const oauth = signer(consumer);
    const url = `${server.url}/oAuth`;

    // 1. temporary credentials, with a registered callback, parameters in a form body
    const signed = oauth.authorize({ method: "POST", url, data: { oauth_callback: "http://127.0.0.1:9/cb" } });
    const first = await fetch(url, {
      method: "POST",
      headers: {
        authorization: oauth.toHeader(signed).Authorization,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "oauth_callback=http%3A%2F%2F127.0.0.1%3A9%2Fcb",
    });
    // the callback is in both the header and the body: a duplicate, refused
    expect(first.status).toBe(400);
    const again = await fetch(url, {
      method: "POST",
      headers: authorizationOf(oauth, { method: "POST", url, data: { oauth_callback: "http://127.0.0.1:9/cb" } }),
    });
    expect(again.status).toBe(200);
    expect(again.headers.get("content-type")).toMatch(/^application\/x-www-form-urlencoded/);
    const temp = parseFormBody(await again.text());

    // 2. the owner approves: a redirect to the callback, not followed
    const approval = await fetch(`${url}?oauth_token=${temp.oauth_token}`, {
      headers: { authorization: `Bearer ${owner}` },
      redirect: "manual",
    });
    expect(approval.status).toBe(302);
    const verifier = new URL(approval.headers.get("location")!).searchParams.get("oauth_verifier")!;

    // 3. token credentials
    const exchange = await fetch(url, {
      method: "POST",
      headers: authorizationOf(
        oauth,
        { method: "POST", url, data: { oauth_verifier: verifier } },
        { token: temp.oauth_token!, secret: temp.oauth_token_secret! },
      ),
    });
    expect(exchange.status).toBe(200);
    const tokens = parseFormBody(await exchange.text());
    const access = { token: tokens.oauth_token!, secret: tokens.oauth_token_secret! };

    // 4. a signed GET of the events list, with a query
    await fetch(`${server.url}/api/crm/v1/events/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${owner}` },
      body: JSON.stringify({ code: "WIRE-OAUTH", name: "Over the wire", startsAt: "2027-03-01T09:00:00Z" }),
    });
    const eventsUrl = `${server.url}/api/crm/v1/events?pagesize=10&fields=code%2Cname`;
    const events = await fetch(eventsUrl, {
      headers: authorizationOf(oauth, { method: "GET", url: eventsUrl }, access),
    });
    expect(events.status, await events.clone().text()).toBe(200);
    const page = (await events.json()) as { data: { code: string; name: string }[] };
    expect(page.data).toContainEqual({ code: "WIRE-OAUTH", name: "Over the wire" });
    // the same request replayed is refused
    const replay = await fetch(eventsUrl, { headers: { authorization: lastHeader! } });
    expect(replay.status).toBe(401);
    expect(replay.headers.get("www-authenticate")).toBe('OAuth realm="bizctl"');
    expect(((await replay.json()) as { code: string }).code).toBe("oauth_nonce_reused");
  });
});

let lastHeader: string | undefined;

function authorizationOf(
  oauth: ReturnType<typeof signer>,
  request: { method: string; url: string; data?: Record<string, string> },
  token?: Credentials,
): Record<string, string> {
  lastHeader = authHeader(oauth, request, token);
  return { authorization: lastHeader };
}
