// An OAuth 1.0a client for the bench, independent of the server's implementation: one three-legged flow.
import { createHmac } from "node:crypto";
import OAuth from "oauth-1.0a";

/** An HMAC-SHA1 signer from the oauth-1.0a package (independent of the server's implementation). */
export function oauthSigner(consumer) {
  return new OAuth({
    consumer: { key: consumer.key, secret: consumer.secret },
    signature_method: "HMAC-SHA1",
    hash_function: (baseString, key) => createHmac("sha1", key).update(baseString).digest("base64"),
  });
}

export function signHeader(signer, { method, url, data = {} }, token) {
  const signed = signer.authorize({ method, url, data }, token && { key: token.token, secret: token.secret });
  return signer.toHeader(signed).Authorization;
}

export async function httpCall(what, url, init, expected = 200) {
  const response = await fetch(url, init);
  const body = await response.text();
  if (response.status !== expected) throw new Error(`${what}: ${response.status} ${body.slice(0, 300)}`);
  return body;
}

/** The three legs of RFC 5849 against the running server, once: token credentials of the admin. */
export async function oauthFlow(serverUrl, token) {
  const bearer = { authorization: `Bearer ${token}` };
  const created = JSON.parse(
    await httpCall(
      "creating the OAuthConsumer",
      `${serverUrl}/Resources`,
      {
        method: "POST",
        headers: { ...bearer, "content-type": "application/json" },
        body: JSON.stringify({ resourceType: "OAuthConsumer", name: "bench", callbackUrls: [] }),
      },
      201,
    ),
  );
  const consumer = { key: created.consumerKey, secret: created.consumerSecret };
  const signer = oauthSigner(consumer);
  const endpoint = `${serverUrl}/oAuth`;
  const first = new URLSearchParams(
    await httpCall("temporary credentials (POST /oAuth, oauth_callback=oob)", endpoint, {
      method: "POST",
      headers: {
        authorization: signHeader(signer, { method: "POST", url: endpoint, data: { oauth_callback: "oob" } }),
      },
    }),
  );
  const temporary = { token: first.get("oauth_token"), secret: first.get("oauth_token_secret") };
  const approval = JSON.parse(
    await httpCall(
      "approval (GET /oAuth?oauth_token=… as the admin)",
      `${endpoint}?oauth_token=${encodeURIComponent(temporary.token)}`,
      {
        headers: bearer,
      },
    ),
  );
  const exchange = new URLSearchParams(
    await httpCall("token credentials (POST /oAuth with the verifier)", endpoint, {
      method: "POST",
      headers: {
        authorization: signHeader(
          signer,
          { method: "POST", url: endpoint, data: { oauth_verifier: approval.oauth_verifier } },
          temporary,
        ),
      },
    }),
  );
  return { signer, access: { token: exchange.get("oauth_token"), secret: exchange.get("oauth_token_secret") } };
}
