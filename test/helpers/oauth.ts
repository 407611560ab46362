/**
 * OAuth 1.0a test helpers: consumers through the real resources API, signing with the
 * independent `oauth-1.0a` package, and an inject() flow through the three legs.
 */
import { createHmac } from "node:crypto";
import OAuth from "oauth-1.0a";
import type { BuiltApp } from "../../src/server/app.js";
import { parseAuthorizationHeader, parseForm } from "../../src/server/oauth1/signature.js";
import { bearer } from "./server.js";

/** inject() sends `Host: localhost:80`, so the URL a client signs is this one. */
export const INJECT_BASE = "http://localhost";

export interface TestConsumer {
  id: string;
  key: string;
  secret: string;
}

export interface Credentials {
  token: string;
  secret: string;
}

export async function createConsumer(
  app: BuiltApp,
  adminToken: string,
  input: { name?: string; callbackUrls?: string[] } = {},
): Promise<TestConsumer> {
  const response = await app.inject({
    method: "POST",
    url: "/Resources",
    headers: bearer(adminToken),
    payload: { resourceType: "OAuthConsumer", name: input.name ?? "Printer", callbackUrls: input.callbackUrls ?? [] },
  });
  if (response.statusCode !== 201) throw new Error(`consumer create answered ${response.statusCode}: ${response.body}`);
  const body = response.json() as { id: string; consumerKey: string; consumerSecret: string };
  return { id: body.id, key: body.consumerKey, secret: body.consumerSecret };
}

export type HmacMethod = "HMAC-SHA1" | "HMAC-SHA256";

/** A signer from the oauth-1.0a package (a client-side implementation independent of ours). */
export function signer(consumer: { key: string; secret: string }, method: HmacMethod = "HMAC-SHA1"): OAuth {
  const algorithm = method === "HMAC-SHA256" ? "sha256" : "sha1";
  return new OAuth({
    consumer: { key: consumer.key, secret: consumer.secret },
    signature_method: method,
    hash_function: (base, key) => createHmac(algorithm, key).update(base).digest("base64"),
  });
}

/**
 * The Authorization header of a signed request. `data` holds the extra protocol parameters
 * (oauth_callback, oauth_verifier) and any query or form parameters the signature covers.
 */
export function authHeader(
  oauth: OAuth,
  request: { method: string; url: string; data?: Record<string, string> },
  token?: Credentials,
): string {
  const signed = oauth.authorize(
    { method: request.method, url: request.url, data: { ...request.data } },
    token && { key: token.token, secret: token.secret },
  );
  return oauth.toHeader(signed).Authorization;
}

export function parseFormBody(body: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(body));
}

export interface FlowResult {
  temporary: Credentials;
  verifier: string;
  access: Credentials;
}

/** The first leg through inject(), with the oob callback; fails the test on any unexpected answer. */
export async function injectTemporaryCredentials(
  app: BuiltApp,
  consumer: TestConsumer,
  method: HmacMethod = "HMAC-SHA1",
): Promise<Credentials> {
  const url = `${INJECT_BASE}/oAuth`;
  const first = await app.inject({
    method: "POST",
    url: "/oAuth",
    headers: {
      authorization: authHeader(signer(consumer, method), { method: "POST", url, data: { oauth_callback: "oob" } }),
    },
  });
  if (first.statusCode !== 200) throw new Error(`temporary credentials: ${first.statusCode} ${first.body}`);
  const t = parseFormBody(first.body);
  return { token: t.oauth_token!, secret: t.oauth_token_secret! };
}

/** The three legs through inject(), with the oob callback; fails the test on any unexpected answer. */
export async function injectFlow(
  app: BuiltApp,
  consumer: TestConsumer,
  ownerToken: string,
  method: HmacMethod = "HMAC-SHA1",
): Promise<FlowResult> {
  const oauth = signer(consumer, method);
  const url = `${INJECT_BASE}/oAuth`;
  const temporary = await injectTemporaryCredentials(app, consumer, method);
  const approval = await app.inject({
    method: "GET",
    url: `/oAuth?oauth_token=${encodeURIComponent(temporary.token)}`,
    headers: bearer(ownerToken),
  });
  if (approval.statusCode !== 200) throw new Error(`approval: ${approval.statusCode} ${approval.body}`);
  const verifier = (approval.json() as { oauth_verifier: string }).oauth_verifier;
  const exchange = await app.inject({
    method: "POST",
    url: "/oAuth",
    headers: {
      authorization: authHeader(oauth, { method: "POST", url, data: { oauth_verifier: verifier } }, temporary),
    },
  });
  if (exchange.statusCode !== 200) throw new Error(`token credentials: ${exchange.statusCode} ${exchange.body}`);
  const a = parseFormBody(exchange.body);
  return { temporary, verifier, access: { token: a.oauth_token!, secret: a.oauth_token_secret! } };
}

/** RFC 5849 section 3.4.1.1: the example request (query, header and a form body: `c2` alone, `+` as a space). */
const EXAMPLE_HEADER =
  'OAuth realm="Example", oauth_consumer_key="9djdj82h48djs9d2", oauth_token="kkk9d7dh3k39sjv7", ' +
  'oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131201", oauth_nonce="7d8f3e4a", ' +
  'oauth_signature="bYT5CMsGcbgUdFHObYMEfcx6bsw%3D"';
export const RFC_EXAMPLE = {
  /** the parameters the request carries */
  params: [
    ...parseForm("b5=%3D%253D&a3=a&c%40=&a2=r%20b"),
    ...parseAuthorizationHeader(EXAMPLE_HEADER)!,
    ...parseForm("c2&a3=2+q"),
  ],
  /** its signature base string as printed in the RFC, where the line breaks are for display only */
  baseString: [
    "POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q",
    "%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_",
    "key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_m",
    "ethod%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk",
    "9d7dh3k39sjv7",
  ].join(""),
};

/** A signed request with a chosen timestamp and nonce (oauth-1.0a, with its clock and nonce overridden). */
export function pinnedHeader(
  consumer: { key: string; secret: string },
  request: { method: string; url: string; data?: Record<string, string> },
  token: Credentials | undefined,
  pin: { timestamp?: number; nonce?: string; signatureMethod?: string } = {},
): string {
  const oauth = signer(consumer);
  // (the package's typings misspell this property as signature_metho)
  if (pin.signatureMethod) (oauth as unknown as { signature_method: string }).signature_method = pin.signatureMethod;
  if (pin.timestamp !== undefined) oauth.getTimeStamp = () => pin.timestamp!;
  if (pin.nonce !== undefined) oauth.getNonce = () => pin.nonce!;
  return authHeader(oauth, request, token);
}
