import { beforeAll, describe, expect, it } from "vitest";
import { percentEncode } from "../../src/server/oauth1/signature.js";
import { recordNonce } from "../../src/server/store/oauth-repo.js";
import {
  authHeader,
  type Credentials,
  createConsumer,
  INJECT_BASE,
  injectFlow,
  parseFormBody,
  pinnedHeader,
  signer,
  type TestConsumer,
} from "../helpers/oauth.js";
import { bearer, problemOf, type SignedIn, type TestServer, useTestServer } from "../helpers/server.js";

const EVENTS = "/api/crm/v1/events";
const OAUTH_URL = `${INJECT_BASE}/oAuth`;

// ---------------------------------------------------------------------------------------------
// the endpoint, over inject()

interface Snapshot {
  tokens: unknown[];
  temporary: unknown[];
  sessions: unknown[];
  nonces: unknown[];
}

async function snapshot(server: TestServer): Promise<Snapshot> {
  const db = server.app.services.store.db;
  return {
    tokens: await db.selectFrom("oauth_tokens").selectAll().orderBy("token").execute(),
    temporary: await db.selectFrom("oauth_temporary_credentials").selectAll().orderBy("token").execute(),
    sessions: await db.selectFrom("sessions").select(["id", "revoked_at"]).orderBy("id").execute(),
    nonces: await db.selectFrom("oauth_nonces").selectAll().orderBy("nonce").execute(),
  };
}

const now = () => Math.floor(Date.now() / 1000);

describe("the /oAuth endpoint", () => {
  const server = useTestServer();
  let member: SignedIn;
  let consumer: TestConsumer;

  beforeAll(async () => {
    member = await server.signIn({
      userName: "mia.member",
      password: "a long member passphrase 314",
      roles: ["member"],
    });
    consumer = await createConsumer(server.app, server.token, {
      callbackUrls: ["https://printer.example.com/ready", "myapp://oauth"],
    });
  });

  const post = (authorization: string, url = "/oAuth", extra: Record<string, string> = {}) =>
    server.app.inject({ method: "POST", url, headers: { authorization, ...extra } });
  const get = (authorization: string, url = "/oAuth") =>
    server.app.inject({ method: "GET", url, headers: { authorization } });

  async function temporary(callback = "oob"): Promise<Credentials> {
    const response = await post(
      pinnedHeader(consumer, { method: "POST", url: OAUTH_URL, data: { oauth_callback: callback } }, undefined),
    );
    expect(response.statusCode, response.body).toBe(200);
    const body = parseFormBody(response.body);
    return { token: body.oauth_token!, secret: body.oauth_token_secret! };
  }

  async function approve(token: string, owner = member.token): Promise<string> {
    const response = await get(`Bearer ${owner}`, `/oAuth?oauth_token=${encodeURIComponent(token)}`);
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { oauth_verifier: string }).oauth_verifier;
  }

  const exchangeHeader = (
    temp: Credentials,
    verifier: string,
    pin: Parameters<typeof pinnedHeader>[3] = {},
    who = consumer,
  ) => pinnedHeader(who, { method: "POST", url: OAUTH_URL, data: { oauth_verifier: verifier } }, temp, pin);

  async function access(): Promise<Credentials> {
    return (await injectFlow(server.app, consumer, member.token)).access;
  }

  const identityHeader = (token: Credentials, pin: Parameters<typeof pinnedHeader>[3] = {}, who = consumer) =>
    pinnedHeader(who, { method: "GET", url: OAUTH_URL }, token, pin);

  /** Runs the attack, expects its problem and a 401/400 with no change of state. */
  async function refused(
    attack: () => Promise<{ statusCode: number; headers: Record<string, unknown>; body: string }>,
    status: number,
    code: string,
  ) {
    const before = await snapshot(server);
    const response = await attack();
    problemOf(response as never, status, code);
    if (status === 401) {
      expect(response.headers["www-authenticate"]).toMatch(
        /^(OAuth|Bearer) realm="bizctl"(, error="invalid_token", .*)?$/,
      );
    }
    expect(await snapshot(server)).toEqual(before);
    return response;
  }

  describe("the three legs", () => {
    it("issues temporary credentials, form-encoded, with oauth_callback_confirmed=true", async () => {
      const response = await post(
        authHeader(signer(consumer), { method: "POST", url: OAUTH_URL, data: { oauth_callback: "oob" } }),
      );
      expect(response.statusCode).toBe(200);
      expect(response.headers["content-type"]).toMatch(/^application\/x-www-form-urlencoded/);
      const body = parseFormBody(response.body);
      expect(Object.keys(body)).toEqual(["oauth_token", "oauth_token_secret", "oauth_callback_confirmed"]);
      expect(body.oauth_callback_confirmed).toBe("true");
      expect(body.oauth_token!.length).toBeGreaterThanOrEqual(20);
      expect(body.oauth_token_secret!.length).toBeGreaterThanOrEqual(40);
    });

    it("treats an empty oauth_token on a temporary credentials request as none (as some clients send it)", async () => {
      const header = authHeader(signer(consumer), {
        method: "POST",
        url: OAUTH_URL,
        data: { oauth_callback: "oob", oauth_token: "" },
      });
      expect(header).toContain('oauth_token=""');
      const response = await post(header);
      expect(response.statusCode, response.body).toBe(200);
      expect(parseFormBody(response.body).oauth_callback_confirmed).toBe("true");
    });

    it("runs the oob flow: approval as JSON, then token credentials, then the signed identity call", async () => {
      const flow = await injectFlow(server.app, consumer, member.token);
      expect(flow.access.token).not.toBe(flow.temporary.token);
      const identity = await get(identityHeader(flow.access));
      expect(identity.statusCode, identity.body).toBe(200);
      expect(identity.json()).toEqual({
        user: { id: member.id, userName: "mia.member", displayName: "mia.member", roles: ["member"] },
        consumerKey: consumer.key,
      });
    });

    it("redirects the owner to a registered callback with oauth_token and oauth_verifier (its query kept)", async () => {
      const temp = await temporary("https://printer.example.com/ready?state=a%20b");
      const response = await get(`Bearer ${member.token}`, `/oAuth?oauth_token=${temp.token}`);
      expect(response.statusCode).toBe(302);
      const location = new URL(String(response.headers.location));
      expect(`${location.origin}${location.pathname}`).toBe("https://printer.example.com/ready");
      expect(location.searchParams.get("state")).toBe("a b");
      expect(location.searchParams.get("oauth_token")).toBe(temp.token);
      const verifier = location.searchParams.get("oauth_verifier")!;
      const exchanged = await post(exchangeHeader(temp, verifier));
      expect(exchanged.statusCode, exchanged.body).toBe(200);
      expect(Object.keys(parseFormBody(exchanged.body))).toEqual(["oauth_token", "oauth_token_secret"]);
    });

    it("accepts a custom-scheme callback registered for the consumer", async () => {
      const temp = await temporary("myapp://oauth");
      const response = await get(`Bearer ${member.token}`, `/oAuth?oauth_token=${temp.token}`);
      expect(response.statusCode).toBe(302);
      expect(String(response.headers.location)).toMatch(/^myapp:\/\/oauth\?oauth_token=.+&oauth_verifier=.+$/);
    });

    it("refuses a callback that is not registered, or not a URL (400 oauth_callback_rejected, nothing issued)", async () => {
      for (const callback of [
        "https://evil.example/ready",
        "https://printer.example.com/other",
        "https://printer.example.com/ready/",
        "http://printer.example.com/ready",
        "https://printer.example.com:8443/ready",
        "https://printer.example.com.evil.example/ready",
        "https://user@printer.example.com/ready",
        "myapp://other",
        "not a url",
        "https://printer.example.com/ready#x",
      ]) {
        await refused(
          () =>
            post(
              pinnedHeader(consumer, { method: "POST", url: OAUTH_URL, data: { oauth_callback: callback } }, undefined),
            ),
          400,
          "oauth_callback_rejected",
        );
      }
    });

    it("takes the parameters from a form body (+ as a space) and from the query string too", async () => {
      // form body: every protocol parameter in the body, as section 3.5.2 allows
      const oauth = signer(consumer);
      const data = { oauth_callback: "oob", note: "a b+c" };
      const signed = oauth.authorize({ method: "POST", url: `${OAUTH_URL}/`, data: { ...data } });
      const form = Object.entries(signed)
        .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v)).replace(/%20/g, "+")}`)
        .join("&");
      const viaForm = await server.app.inject({
        method: "POST",
        url: "/oAuth/",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        payload: form,
      });
      expect(viaForm.statusCode, viaForm.body).toBe(200);
      // query string: section 3.5.3, on GET
      const signedGet = oauth.authorize({
        method: "GET",
        url: `${INJECT_BASE}/oauth`,
        data: { oauth_callback: "oob" },
      });
      const query = Object.entries(signedGet)
        .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
        .join("&");
      const viaQuery = await server.app.inject({ method: "GET", url: `/oauth?${query}` });
      expect(viaQuery.statusCode, viaQuery.body).toBe(200);
      expect(parseFormBody(viaQuery.body).oauth_callback_confirmed).toBe("true");
    });

    it("signs repeated names of the query and the body, all kept", async () => {
      const token = await access();
      const oauth = signer(consumer);
      /** a request signed over x=2, x=1 in the query and y=b, y=a in the body, that sends this body */
      const send = (payload: string) => {
        const signed = oauth.authorize(
          { method: "POST", url: `${OAUTH_URL}?x=2&x=1`, data: { y: ["b", "a"] } },
          { key: token.token, secret: token.secret },
        );
        return server.app.inject({
          method: "POST",
          url: "/oAuth?x=2&x=1",
          headers: {
            authorization: oauth.toHeader(signed).Authorization,
            "content-type": "application/x-www-form-urlencoded",
          },
          payload,
        });
      };
      const response = await send("y=b&y=a");
      expect(response.statusCode, response.body).toBe(200);
      // dropping one of them breaks the signature
      problemOf(await send("y=b"), 401, "oauth_signature_invalid");
    });

    it("verifies HMAC-SHA256 signatures", async () => {
      const flow = await injectFlow(server.app, consumer, member.token, "HMAC-SHA256");
      const oauth = signer(consumer, "HMAC-SHA256");
      const response = await get(authHeader(oauth, { method: "GET", url: OAUTH_URL }, flow.access));
      expect(response.statusCode, response.body).toBe(200);
    });

    it("keeps temporary credentials, verifiers and nonces in the database", async () => {
      const flow = await injectFlow(server.app, consumer, member.token);
      const db = server.app.services.store.db;
      const temp = await db
        .selectFrom("oauth_temporary_credentials")
        .selectAll()
        .where("token", "=", flow.temporary.token)
        .executeTakeFirstOrThrow();
      expect(temp).toMatchObject({ consumer_id: consumer.id, callback: "oob", user_id: member.id });
      expect(temp.used_at).not.toBeNull();
      expect(temp.verifier_hash).not.toContain(flow.verifier);
      expect(Date.parse(temp.expires_at) - Date.parse(temp.created_at)).toBe(600_000);
      const issued = await db
        .selectFrom("oauth_tokens")
        .selectAll()
        .where("token", "=", flow.access.token)
        .executeTakeFirstOrThrow();
      expect(issued).toMatchObject({ consumer_id: consumer.id, user_id: member.id });
      const nonces = await db.selectFrom("oauth_nonces").selectAll().where("consumer_id", "=", consumer.id).execute();
      expect(nonces.length).toBeGreaterThanOrEqual(2);
    });
  });

  describe("attacks, each refused with its code and no change of state", () => {
    it("a replayed request (same nonce and timestamp) is oauth_nonce_reused", async () => {
      const token = await access();
      const header = identityHeader(token);
      expect((await get(header)).statusCode).toBe(200);
      await refused(() => get(header), 401, "oauth_nonce_reused");
      // the same on another route
      const events = pinnedHeader(consumer, { method: "GET", url: `${INJECT_BASE}${EVENTS}` }, token);
      expect((await get(events, EVENTS)).statusCode).toBe(200);
      await refused(() => get(events, EVENTS), 401, "oauth_nonce_reused");
      // a replayed temporary credentials request too
      const initiate = pinnedHeader(
        consumer,
        { method: "POST", url: OAUTH_URL, data: { oauth_callback: "oob" } },
        undefined,
      );
      expect((await post(initiate)).statusCode).toBe(200);
      await refused(() => post(initiate), 401, "oauth_nonce_reused");
    });

    it("the same signed request sent many times at once is accepted exactly once", async () => {
      const token = await access();
      // concurrent requests share one commit of their nonces: within a batch the key still decides
      const scenarios = [
        {
          name: "one header five times",
          headers: Array.from({ length: 5 }, () => identityHeader(token, { nonce: "twice" })),
        },
        {
          name: "three fresh nonces and a replay of each",
          headers: ["a", "b", "c", "a", "b", "c"].map((nonce) => identityHeader(token, { nonce: `pair-${nonce}` })),
        },
      ];
      for (const scenario of scenarios) {
        const responses = await Promise.all(scenario.headers.map((header) => get(header)));
        const byHeader = new Map<string, string[]>();
        scenario.headers.forEach((header, i) => {
          const code = responses[i]!.statusCode === 200 ? "ok" : (responses[i]!.json() as { code: string }).code;
          byHeader.set(header, [...(byHeader.get(header) ?? []), code]);
        });
        for (const codes of byHeader.values()) {
          expect(
            codes.filter((code) => code === "ok"),
            scenario.name,
          ).toEqual(["ok"]);
          expect(
            codes.filter((code) => code !== "ok"),
            scenario.name,
          ).toEqual(Array(codes.length - 1).fill("oauth_nonce_reused"));
        }
      }
    });

    it("a nonce write that fails in a shared commit fails alone", async () => {
      const token = await access();
      const db = server.app.services.store.db;
      const row = (nonce: string, consumerId = consumer.id) => ({
        ts: String(now()),
        consumer_id: consumerId,
        token: token.token,
        nonce,
      });
      // one row names no consumer (the foreign key refuses it): the batch's transaction fails,
      // and the others are written one by one, each with its own outcome
      const outcomes = await Promise.allSettled([
        recordNonce(db, row("shared-1")),
        recordNonce(db, row("shared-2", "no-such-consumer")),
        recordNonce(db, row("shared-3")),
        recordNonce(db, row("shared-1")),
      ]);
      expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : "error"))).toEqual([true, "error", true, false]);
      const stored = await db.selectFrom("oauth_nonces").select("nonce").where("nonce", "like", "shared-%").execute();
      expect(stored.map((r) => r.nonce).sort()).toEqual(["shared-1", "shared-3"]);
    });

    it("a stale timestamp (more than 300 s old) is oauth_timestamp_refused", async () => {
      const token = await access();
      await refused(() => get(identityHeader(token, { timestamp: now() - 301 })), 401, "oauth_timestamp_refused");
      await refused(() => get(identityHeader(token, { timestamp: 0 })), 401, "oauth_timestamp_refused");
      expect((await get(identityHeader(token, { timestamp: now() - 250 }))).statusCode).toBe(200);
    });

    it("a future timestamp (more than 300 s ahead) is oauth_timestamp_refused", async () => {
      const token = await access();
      await refused(() => get(identityHeader(token, { timestamp: now() + 301 })), 401, "oauth_timestamp_refused");
      await refused(() => get(identityHeader(token, { timestamp: 99_999_999_999 })), 401, "oauth_timestamp_refused");
      expect((await get(identityHeader(token, { timestamp: now() + 250 }))).statusCode).toBe(200);
    });

    it("a wrong consumer secret is oauth_signature_invalid", async () => {
      const wrong = { key: consumer.key, secret: `${consumer.secret}x` };
      await refused(
        () => post(pinnedHeader(wrong, { method: "POST", url: OAUTH_URL, data: { oauth_callback: "oob" } }, undefined)),
        401,
        "oauth_signature_invalid",
      );
      const token = await access();
      await refused(
        () => get(identityHeader(token, {}, { ...consumer, secret: "nope" })),
        401,
        "oauth_signature_invalid",
      );
      // an unknown consumer key likewise
      await refused(
        () => get(identityHeader(token, {}, { ...consumer, key: "unknown-key" })),
        401,
        "oauth_signature_invalid",
      );
    });

    it("a wrong token secret is oauth_signature_invalid (temporary and token credentials)", async () => {
      const temp = await temporary();
      const verifier = await approve(temp.token);
      await refused(() => post(exchangeHeader({ ...temp, secret: "wrong" }, verifier)), 401, "oauth_signature_invalid");
      const token = await access();
      await refused(() => get(identityHeader({ ...token, secret: "wrong" })), 401, "oauth_signature_invalid");
      // the genuine exchange still works: nothing was spent
      expect((await post(exchangeHeader(temp, verifier))).statusCode).toBe(200);
    });

    it("a verifier used twice is oauth_verifier_invalid", async () => {
      const temp = await temporary();
      const verifier = await approve(temp.token);
      expect((await post(exchangeHeader(temp, verifier))).statusCode).toBe(200);
      await refused(() => post(exchangeHeader(temp, verifier)), 401, "oauth_verifier_invalid");
    });

    it("the verifier of another token is oauth_verifier_invalid, and spends nothing", async () => {
      const a = await temporary();
      const b = await temporary();
      await approve(a.token);
      const verifierB = await approve(b.token);
      await refused(() => post(exchangeHeader(a, verifierB)), 401, "oauth_verifier_invalid");
      await refused(() => post(exchangeHeader(a, "made-up")), 401, "oauth_verifier_invalid");
      expect((await post(exchangeHeader(b, verifierB))).statusCode).toBe(200);
    });

    it("an exchange before the owner approved is oauth_verifier_invalid", async () => {
      const temp = await temporary();
      await refused(() => post(exchangeHeader(temp, "guess")), 401, "oauth_verifier_invalid");
    });

    it("temporary credentials of another consumer are oauth_token_invalid", async () => {
      const other = await createConsumer(server.app, server.token, { name: "Other" });
      const temp = await temporary();
      const verifier = await approve(temp.token);
      await refused(() => post(exchangeHeader(temp, verifier, {}, other)), 401, "oauth_token_invalid");
      // and token credentials of another consumer
      const token = await access();
      await refused(() => get(identityHeader(token, {}, other)), 401, "oauth_token_invalid");
    });

    it("a temporary token used as token credentials is oauth_token_invalid, on /oAuth and on other routes", async () => {
      const temp = await temporary();
      await approve(temp.token);
      await refused(() => get(identityHeader(temp)), 401, "oauth_token_invalid");
      const events = pinnedHeader(consumer, { method: "GET", url: `${INJECT_BASE}${EVENTS}` }, temp);
      await refused(() => get(events, EVENTS), 401, "oauth_token_invalid");
    });

    it("token credentials used as temporary credentials are oauth_token_invalid", async () => {
      const token = await access();
      await refused(() => post(exchangeHeader(token, "whatever")), 401, "oauth_token_invalid");
      await refused(
        () => get(`Bearer ${member.token}`, `/oAuth?oauth_token=${token.token}`),
        401,
        "oauth_token_invalid",
      );
    });

    it("temporary credentials are approved only once", async () => {
      const temp = await temporary();
      await approve(temp.token);
      await refused(
        () => get(`Bearer ${member.token}`, `/oAuth?oauth_token=${temp.token}`),
        401,
        "oauth_token_invalid",
      );
    });

    it("a revoked token is oauth_token_invalid", async () => {
      const token = await access();
      const revoked = await server.app.inject({
        method: "DELETE",
        url: `/oauth/tokens/${encodeURIComponent(token.token)}`,
        headers: server.auth,
      });
      expect(revoked.statusCode).toBe(204);
      await refused(() => get(identityHeader(token)), 401, "oauth_token_invalid");
      await refused(
        () => get(pinnedHeader(consumer, { method: "GET", url: `${INJECT_BASE}${EVENTS}` }, token), EVENTS),
        401,
        "oauth_token_invalid",
      );
    });

    it("an unknown signature method is 400; RSA-SHA1 from a consumer without a public key is 401", async () => {
      const token = await access();
      await refused(() => get(identityHeader(token, { signatureMethod: "HMAC-MD5" })), 400, "validation_failed");
      await refused(() => get(identityHeader(token, { signatureMethod: "RSA-SHA1" })), 401, "oauth_signature_invalid");
    });

    it("PLAINTEXT is refused over plain HTTP", async () => {
      const header =
        `OAuth oauth_consumer_key="${consumer.key}", oauth_signature_method="PLAINTEXT", ` +
        `oauth_callback="oob", oauth_signature="${percentEncode(`${percentEncode(consumer.secret)}&`)}"`;
      await refused(() => post(header), 400, "validation_failed");
    });

    it("duplicated oauth parameters are 400", async () => {
      const token = await access();
      const header = identityHeader(token);
      // the same parameter twice in the header
      await refused(() => get(`${header}, oauth_nonce="again"`), 400, "validation_failed");
      // once in the header and once in the query
      await refused(() => get(header, "/oAuth?oauth_nonce=again"), 400, "validation_failed");
      await refused(() => get(header, "/oAuth?oauth_signature_method=HMAC-SHA1"), 400, "validation_failed");
    });

    it("a signature over a different URL, query or method is oauth_signature_invalid", async () => {
      const token = await access();
      const otherPath = pinnedHeader(consumer, { method: "GET", url: `${INJECT_BASE}/oauth` }, token);
      await refused(() => get(otherPath), 401, "oauth_signature_invalid");
      const otherHost = pinnedHeader(consumer, { method: "GET", url: "http://evil.example/oAuth" }, token);
      await refused(() => get(otherHost), 401, "oauth_signature_invalid");
      const otherScheme = pinnedHeader(consumer, { method: "GET", url: "https://localhost/oAuth" }, token);
      await refused(() => get(otherScheme), 401, "oauth_signature_invalid");
      const otherQuery = pinnedHeader(consumer, { method: "GET", url: `${OAUTH_URL}?page=1` }, token);
      await refused(() => get(otherQuery, "/oAuth?page=2"), 401, "oauth_signature_invalid");
      const otherMethod = pinnedHeader(consumer, { method: "POST", url: OAUTH_URL }, token);
      await refused(() => get(otherMethod), 401, "oauth_signature_invalid");
      const events = pinnedHeader(consumer, { method: "GET", url: `${INJECT_BASE}${EVENTS}` }, token);
      await refused(
        () => server.app.inject({ method: "DELETE", url: `${EVENTS}/NOPE`, headers: { authorization: events } }),
        401,
        "oauth_signature_invalid",
      );
    });

    it("oauth_version other than 1.0, and oauth_token_secret sent as a parameter, are 400", async () => {
      const token = await access();
      const v2 = pinnedHeader(consumer, { method: "GET", url: OAUTH_URL }, token);
      await refused(() => get(v2.replace('oauth_version="1.0"', 'oauth_version="2.0"')), 400, "validation_failed");
      const withSecret = pinnedHeader(
        consumer,
        { method: "GET", url: OAUTH_URL, data: { oauth_token_secret: token.secret } },
        token,
      );
      await refused(() => get(withSecret), 400, "validation_failed");
    });

    it("missing parameters are 400 oauth_parameter_absent", async () => {
      await refused(() => server.app.inject({ method: "GET", url: "/oAuth" }), 400, "oauth_parameter_absent");
      await refused(() => post(`OAuth oauth_consumer_key="${consumer.key}"`), 400, "oauth_parameter_absent");
      const noCallback = pinnedHeader(consumer, { method: "POST", url: OAUTH_URL }, undefined);
      await refused(() => post(noCallback), 400, "oauth_parameter_absent");
      const noNonce = pinnedHeader(consumer, { method: "GET", url: OAUTH_URL }, undefined).replace(
        /oauth_nonce="[^"]*", /,
        "",
      );
      await refused(() => get(noNonce), 400, "oauth_parameter_absent");
    });

    it("approval needs the owner's valid Bearer token", async () => {
      const temp = await temporary();
      await refused(
        () => server.app.inject({ method: "GET", url: `/oAuth?oauth_token=${temp.token}` }),
        401,
        "token_missing",
      );
      await refused(() => get("Bearer not-a-jwt", `/oAuth?oauth_token=${temp.token}`), 401, "token_invalid");
      await refused(() => get(`Bearer ${member.token}`, "/oAuth?oauth_token=unknown"), 401, "oauth_token_invalid");
    });

    it("malformed requests get a 4xx problem, never a 5xx", async () => {
      const cases: { authorization?: string; url?: string; body?: string; type?: string }[] = [
        { authorization: "OAuth" },
        { authorization: "OAuth ," },
        { authorization: 'OAuth oauth_consumer_key="%"' },
        {
          authorization:
            'OAuth oauth_consumer_key="a", oauth_signature_method="HMAC-SHA1", oauth_signature="x", oauth_timestamp="12ab", oauth_nonce="n", oauth_callback="oob"',
        },
        {
          authorization: `OAuth oauth_consumer_key="a", oauth_signature_method="HMAC-SHA1", oauth_signature="x", oauth_timestamp="${now()}", oauth_nonce="${"n".repeat(300)}", oauth_callback="oob"`,
        },
        { url: "/oAuth?oauth_token=%ZZ" },
        { url: "/oAuth?oauth_token=a&oauth_token=b" },
        { body: "oauth_token=%E0%A4%A", type: "application/x-www-form-urlencoded" },
        { body: "\u0000\u0001=\u0002", type: "application/x-www-form-urlencoded" },
        { body: "oauth_callback=oob", type: "text/plain" },
      ];
      for (const c of cases) {
        const response = await server.app.inject({
          method: "POST",
          url: c.url ?? "/oAuth",
          headers: {
            ...(c.authorization && { authorization: c.authorization }),
            ...(c.type && { "content-type": c.type }),
          },
          ...(c.body !== undefined && { payload: c.body }),
        });
        expect(response.statusCode, JSON.stringify(c)).toBeGreaterThanOrEqual(400);
        expect(response.statusCode, JSON.stringify(c)).toBeLessThan(500);
        expect(response.headers["content-type"]).toMatch(/^application\/problem\+json/);
      }
      // hostile Host headers and too many parameters, on the endpoint and on another route
      const header = `OAuth oauth_consumer_key="${consumer.key}", oauth_signature_method="PLAINTEXT", oauth_signature="x", oauth_token="t"`;
      for (const host of ["exa mple.com", "[::1", "a/b?c", "%", "example.com:99999"]) {
        for (const url of ["/oAuth", EVENTS]) {
          const response = await server.app.inject({ method: "GET", url, headers: { host, authorization: header } });
          expect(response.statusCode, `${host} ${url}: ${response.body}`).toBeGreaterThanOrEqual(400);
          expect(response.statusCode, `${host} ${url}: ${response.body}`).toBeLessThan(500);
        }
      }
      const many = await server.app.inject({
        method: "POST",
        url: "/oAuth",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        payload: Array.from({ length: 1001 }, (_v, i) => `p${i}=${i}`).join("&"),
      });
      problemOf(many, 400, "validation_failed");
      // a form body is accepted nowhere else
      const elsewhere = await server.app.inject({
        method: "POST",
        url: EVENTS,
        headers: { ...server.auth, "content-type": "application/x-www-form-urlencoded" },
        payload: "name=x",
      });
      problemOf(elsewhere, 415, "unsupported_media_type");
    });
  });

  describe("token credentials on every other route", () => {
    it("act as a Bearer JWT of the approving user: reads, writes, role checks", async () => {
      const token = await access();
      const call = (method: "GET" | "POST" | "DELETE", path: string, payload?: unknown) =>
        server.app.inject({
          method,
          url: path,
          headers: { authorization: pinnedHeader(consumer, { method, url: `${INJECT_BASE}${path}` }, token) },
          ...(payload !== undefined && { payload: payload as object }),
        });
      const isLogged = await call("GET", "/auth/isLogged");
      expect(isLogged.statusCode).toBe(200);
      expect(isLogged.json()).toMatchObject({
        loggedIn: true,
        user: { id: member.id, roles: ["member"] },
        credential: { type: "oauth" },
      });
      const created = await call("POST", `${EVENTS}/`, {
        code: "OAUTH-1",
        name: "Signed",
        startsAt: "2027-02-01T10:00:00Z",
      });
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json().createdBy).toBe("mia.member");
      const page = await call("GET", `${EVENTS}?pagesize=5&order=-startsAt`);
      expect(page.statusCode, page.body).toBe(200);
      expect(page.json().data.map((e: { code: string }) => e.code)).toContain("OAUTH-1");
      // a member stays a member: the admin-only routes are forbidden
      problemOf(await call("GET", "/oauth/tokens"), 403, "forbidden");
      expect((await call("DELETE", `${EVENTS}/OAUTH-1`)).statusCode).toBe(204);
    });

    it("without oauth_token (consumer only) they are not a user", async () => {
      const header = pinnedHeader(consumer, { method: "GET", url: `${INJECT_BASE}${EVENTS}` }, undefined);
      problemOf(await get(header, EVENTS), 400, "oauth_parameter_absent");
    });

    it("logout with them revokes them, and only them", async () => {
      const token = await access();
      const other = await access();
      const logout = await server.app.inject({
        method: "POST",
        url: "/auth/logout",
        headers: {
          authorization: pinnedHeader(consumer, { method: "POST", url: `${INJECT_BASE}/auth/logout` }, token),
        },
      });
      expect(logout.statusCode, logout.body).toBe(204);
      problemOf(await get(identityHeader(token)), 401, "oauth_token_invalid");
      expect((await get(identityHeader(other))).statusCode).toBe(200);
      expect((await get(`Bearer ${member.token}`, "/auth/isLogged")).statusCode).toBe(200);
    });

    it("end when the user is disabled, and when the consumer is deleted", async () => {
      const { token: bearerOfUser, ...user } = await server.signIn({
        userName: "dora.disabled",
        password: "another long passphrase 271",
        roles: ["member"],
      });
      const doomed = await createConsumer(server.app, server.token, { name: "Doomed" });
      const viaDoomed = (await injectFlow(server.app, doomed, member.token)).access;
      const ofUser = (await injectFlow(server.app, consumer, bearerOfUser)).access;
      expect((await get(identityHeader(ofUser))).statusCode).toBe(200);
      expect((await get(identityHeader(viaDoomed, {}, doomed))).statusCode).toBe(200);

      // disabling the user (the same path that ends Bearer sessions)
      const current = await server.app.inject({ method: "GET", url: `/Resources/${user.id}`, headers: server.auth });
      const disabled = await server.app.inject({
        method: "PUT",
        url: `/Resources/${user.id}`,
        headers: { ...server.auth, "if-match": String(current.headers.etag) },
        payload: { ...(current.json() as Record<string, unknown>), active: false },
      });
      expect(disabled.statusCode, disabled.body).toBe(200);
      problemOf(await get(identityHeader(ofUser)), 401, "oauth_token_invalid");

      // deleting the consumer cascades to its tokens, temporary credentials and nonces
      const deleted = await server.app.inject({
        method: "DELETE",
        url: `/Resources/${doomed.id}`,
        headers: server.auth,
      });
      expect(deleted.statusCode).toBe(204);
      problemOf(await get(identityHeader(viaDoomed, {}, doomed)), 401, "oauth_signature_invalid");
      const db = server.app.services.store.db;
      expect(await db.selectFrom("oauth_tokens").selectAll().where("consumer_id", "=", doomed.id).execute()).toEqual(
        [],
      );
      expect(await db.selectFrom("oauth_nonces").selectAll().where("consumer_id", "=", doomed.id).execute()).toEqual(
        [],
      );
    });

    it("end when their user changes the password (like the user's other sessions)", async () => {
      const { token: owner, ...user } = await server.signIn({
        userName: "pat.password",
        password: "pat's first long passphrase 5",
        roles: ["member"],
      });
      const token = (await injectFlow(server.app, consumer, owner)).access;
      expect((await get(identityHeader(token))).statusCode).toBe(200);
      const changed = await server.app.inject({
        method: "POST",
        url: "/auth/ChangePassWithLastPass",
        headers: bearer(owner),
        payload: { lastPassword: user.password, newPassword: "pat's second long passphrase 6" },
      });
      expect(changed.statusCode, changed.body).toBe(204);
      problemOf(await get(identityHeader(token)), 401, "oauth_token_invalid");
    });

    it("a user with a temporary password may not approve, and their tokens only reach what a first login may", async () => {
      const { token } = await server.signIn({
        userName: "tim.temporary",
        password: "temporary passphrase for tim 1",
        roles: ["member"],
        temporary: true,
      });
      const temp = await temporary();
      problemOf(await get(`Bearer ${token}`, `/oAuth?oauth_token=${temp.token}`), 403, "password_change_required");
    });
  });

  describe("administration of token credentials", () => {
    it("lists live tokens (all, or of one user) and revokes one; members see only their own", async () => {
      const token = await access();
      const all = await server.app.inject({ method: "GET", url: "/oauth/tokens", headers: server.auth });
      expect(all.statusCode).toBe(200);
      const listed = all.json() as { data: Record<string, unknown>[]; total: number };
      expect(listed.total).toBe(listed.data.length);
      const entry = listed.data.find((t) => t.token === token.token)!;
      expect(entry).toMatchObject({
        userId: member.id,
        userName: "mia.member",
        consumerId: consumer.id,
        consumerKey: consumer.key,
        consumerName: "Printer",
      });
      expect(Date.parse(String(entry.expiresAt)) - Date.parse(String(entry.createdAt))).toBe(90 * 24 * 3600 * 1000);
      expect(JSON.stringify(listed)).not.toContain(token.secret);
      const mine = await server.app.inject({
        method: "GET",
        url: `/oauth/tokens?userId=${member.id}`,
        headers: server.auth,
      });
      expect((mine.json() as { data: { userId: string }[] }).data.every((t) => t.userId === member.id)).toBe(true);
      const none = await server.app.inject({
        method: "GET",
        url: `/oauth/tokens?userId=${server.admin.id}`,
        headers: server.auth,
      });
      expect(none.json()).toEqual({ data: [], total: 0 });

      // a member sees its own grants only (connected applications), and not another user's
      const own = (await get(`Bearer ${member.token}`, "/oauth/tokens")).json() as { data: { userId: string }[] };
      expect(own.data.length).toBeGreaterThan(0);
      expect(own.data.every((t) => t.userId === member.id)).toBe(true);
      problemOf(await get(`Bearer ${member.token}`, `/oauth/tokens?userId=${server.admin.id}`), 403, "forbidden");
      problemOf(
        await server.app.inject({ method: "DELETE", url: "/oauth/tokens/nope", headers: server.auth }),
        404,
        "not_found",
      );
      const revoked = await server.app.inject({
        method: "DELETE",
        url: `/oauth/tokens/${token.token}`,
        headers: server.auth,
      });
      expect(revoked.statusCode).toBe(204);
      const after = await server.app.inject({ method: "GET", url: "/oauth/tokens", headers: server.auth });
      expect((after.json() as { data: { token: string }[] }).data.map((t) => t.token)).not.toContain(token.token);
    });

    it("documents the endpoints in the OpenAPI document", async () => {
      const doc = (await server.app.inject({ method: "GET", url: "/openapi.json" })).json() as {
        paths: Record<string, Record<string, unknown>>;
      };
      expect(Object.keys(doc.paths["/oAuth"] ?? {})).toEqual(expect.arrayContaining(["get", "post"]));
      expect(doc.paths["/oauth/tokens"]).toHaveProperty("get");
      expect(doc.paths["/oauth/tokens/{token}"]).toHaveProperty("delete");
    });
  });
});
