/**
 * Requests signed under RFC 5849: the checks every one passes (parameters, signature method,
 * timestamp window, consumer, signature, nonce), and the user a request signed with token
 * credentials acts as, exactly as a Bearer JWT of the user who approved them.
 */
import {
  OAUTH_SIGNATURE_METHODS,
  OAUTH_TIMESTAMP_WINDOW_SECONDS,
  type OAuthSignatureMethod,
} from "../../contract/oauth.js";
import type { OAuthRequest } from "../oauth1/request.js";
import { verifyRsaSha1 } from "../oauth1/rsa.js";
import { signatureBaseString, verifySignature } from "../oauth1/signature.js";
import { invalid, ProblemError } from "../problem-error.js";
import * as repo from "../store/oauth-repo.js";
import { toAccount } from "../store/users-repo.js";
import { accountPrincipal } from "./accounts.js";
import { noteGrantUse } from "./oauth-grants.js";
import type { Principal, ServiceContext } from "./service-context.js";

export const OAUTH_CHALLENGE = { "www-authenticate": 'OAuth realm="bizctl"' };

type Unauthorized =
  | "oauth_signature_invalid"
  | "oauth_nonce_reused"
  | "oauth_timestamp_refused"
  | "oauth_token_invalid"
  | "oauth_verifier_invalid";

export function unauthorized(code: Unauthorized, detail: string): ProblemError {
  return new ProblemError(code, detail, { headers: OAUTH_CHALLENGE });
}

// ---------------------------------------------------------------------------------------------
// housekeeping

const lastPrune = new WeakMap<ServiceContext, number>();

/** Expired nonces and temporary credentials go at most once a minute, on the way of a request. */
export async function pruneNow(ctx: ServiceContext): Promise<void> {
  const now = ctx.clock().getTime();
  if (now - (lastPrune.get(ctx) ?? 0) < 60_000) return;
  lastPrune.set(ctx, now);
  await repo.pruneOAuth(
    ctx.store.db,
    Math.floor(now / 1000) - OAUTH_TIMESTAMP_WINDOW_SECONDS - 1,
    new Date(now).toISOString(),
  );
}

// ---------------------------------------------------------------------------------------------
// the checks every signed request passes

export interface Signed {
  request: OAuthRequest;
  consumer: repo.ConsumerRecord;
  method: OAuthSignatureMethod;
  signature: string;
  nonce?: { nonce: string; ts: string };
}

/**
 * Section 3.2, up to the signature: the parameters are there and well formed, the method is
 * supported (PLAINTEXT over HTTPS only, unless the development flag allows plain HTTP), the
 * timestamp is within the window, and the consumer exists (`known`: the consumer the caller has
 * already read, with the token credentials).
 */
export async function preflight(
  ctx: ServiceContext,
  request: OAuthRequest,
  known?: repo.ConsumerRecord,
): Promise<Signed> {
  const p = request.oauth;
  const method = p.get("oauth_signature_method");
  const required = ["oauth_consumer_key", "oauth_signature_method", "oauth_signature"];
  if (method !== "PLAINTEXT") required.push("oauth_timestamp", "oauth_nonce");
  const missing = required.filter((name) => !p.get(name));
  if (missing.length) {
    throw new ProblemError("oauth_parameter_absent", `The request lacks ${missing.join(", ")}.`, {
      errors: missing.map((name) => ({ path: `/${name}`, message: `${name} is required` })),
    });
  }
  const version = p.get("oauth_version");
  if (version !== undefined && version !== "1.0") throw invalid(`oauth_version must be 1.0, not '${version}'.`);
  if (!(OAUTH_SIGNATURE_METHODS as readonly string[]).includes(method!)) {
    throw invalid(`The signature method '${method}' is not supported; use ${OAUTH_SIGNATURE_METHODS.join(", ")}.`);
  }
  if (method === "PLAINTEXT" && new URL(request.url).protocol !== "https:" && !ctx.allowPlaintextOverHttp) {
    throw invalid("PLAINTEXT signatures are refused over plain HTTP; use HMAC-SHA1 or HMAC-SHA256, or HTTPS.");
  }
  let nonce: Signed["nonce"];
  const ts = p.get("oauth_timestamp");
  const nonceValue = p.get("oauth_nonce");
  if (ts !== undefined || nonceValue !== undefined) {
    if (ts === undefined || nonceValue === undefined) {
      throw new ProblemError("oauth_parameter_absent", "oauth_timestamp and oauth_nonce go together.");
    }
    if (!/^[0-9]{1,12}$/.test(ts)) throw invalid("oauth_timestamp must be a whole number of seconds since 1970.");
    if (nonceValue.length < 1 || nonceValue.length > 255) throw invalid("oauth_nonce must have 1 to 255 characters.");
    const seconds = Number(ts);
    const now = ctx.clock().getTime() / 1000;
    if (Math.abs(seconds - now) > OAUTH_TIMESTAMP_WINDOW_SECONDS) {
      throw unauthorized(
        "oauth_timestamp_refused",
        `oauth_timestamp is more than ${OAUTH_TIMESTAMP_WINDOW_SECONDS} s away from the server's clock (${Math.floor(now)}).`,
      );
    }
    nonce = { nonce: nonceValue, ts: String(seconds) };
  }
  const consumer = known ?? (await repo.findConsumerByKey(ctx.store.db, p.get("oauth_consumer_key")!));
  if (!consumer) throw unauthorized("oauth_signature_invalid", "The consumer key is not known.");
  return { request, consumer, method: method as OAuthSignatureMethod, signature: p.get("oauth_signature")!, nonce };
}

export function assertSignature(signed: Signed, tokenSecret: string | undefined): void {
  const rsa = signed.method === "RSA-SHA1";
  if (rsa !== !!signed.consumer.publicKey) {
    throw unauthorized(
      "oauth_signature_invalid",
      rsa
        ? "This consumer has no public key: sign with HMAC-SHA1 or HMAC-SHA256 and its secret."
        : "This consumer is registered with an RSA public key: sign with RSA-SHA1 (its secret is not accepted).",
    );
  }
  if (signsOver(signed, signed.request.url, tokenSecret)) return;
  const reached = signed.request.reachedUrl;
  if (reached && signsOver(signed, reached, tokenSecret)) {
    // a client that signed the address it reached, behind a proxy or on another instance than
    // the public URL names: the cause is the URL, which a bare "does not match" never tells
    throw unauthorized(
      "oauth_signature_invalid",
      `The signature was made over ${reached}, the address this request reached, but this server checks signatures over its public URL: ${signed.request.url}. Sign requests for the public URL, or give the server the public URL its clients use (--public-url).`,
    );
  }
  throw unauthorized(
    "oauth_signature_invalid",
    `The signature does not match the request (${signed.method} over ${signed.request.method} ${signed.request.url} and its parameters).`,
  );
}

/** Whether the request's signature is the one of its method and parameters over `url`. */
function signsOver(signed: Signed, url: string, tokenSecret: string | undefined): boolean {
  if (signed.method === "RSA-SHA1") {
    const base = signatureBaseString(signed.request.method, url, signed.request.params);
    return verifyRsaSha1(base, signed.consumer.publicKey!, signed.signature);
  }
  return verifySignature({
    method: signed.request.method,
    url,
    params: signed.request.params,
    signatureMethod: signed.method,
    consumerSecret: signed.consumer.secret,
    tokenSecret,
    signature: signed.signature,
  });
}

/** Accepts (consumer, token, nonce, timestamp) once; inside the transaction of what the request does. */
export async function useNonce(db: ServiceContext["store"]["db"], signed: Signed, token: string): Promise<void> {
  if (!signed.nonce) return;
  const fresh = await repo.recordNonce(db, {
    ts: signed.nonce.ts,
    consumer_id: signed.consumer.id,
    token,
    nonce: signed.nonce.nonce,
  });
  if (!fresh) {
    throw unauthorized("oauth_nonce_reused", "This nonce was already used with this timestamp; sign a new request.");
  }
}

/**
 * A request signed with token credentials: the same Principal a Bearer JWT of the approving user
 * gives, its session being the token's (so logout with it revokes it).
 */
export async function tokenPrincipal(
  ctx: ServiceContext,
  request: OAuthRequest,
): Promise<{ principal: Principal; consumerKey: string }> {
  const token = request.oauth.get("oauth_token");
  // one read brings the token, its session, its user and its consumer (a second read of the
  // consumer only when this one does not name the consumer the request does)
  const row = token ? await repo.findToken(ctx.store.db, token) : undefined;
  const known = row && repo.consumerOfToken(row, request.oauth.get("oauth_consumer_key") ?? "");
  const signed = await preflight(ctx, request, known);
  if (!token) {
    throw new ProblemError("oauth_parameter_absent", "This operation acts as a user: sign it with token credentials.", {
      errors: [{ path: "/oauth_token", message: "oauth_token is required" }],
    });
  }
  if (!row || row.consumer_id !== signed.consumer.id) {
    const temporary = row ? undefined : await repo.findTemporary(ctx.store.db, token);
    throw unauthorized(
      "oauth_token_invalid",
      temporary
        ? "Temporary credentials cannot act as a user; exchange them for token credentials first."
        : "oauth_token is not token credentials issued to this consumer.",
    );
  }
  assertSignature(signed, row.secret);
  const now = ctx.clock();
  if (row.revoked_at) throw unauthorized("oauth_token_invalid", "These token credentials have been revoked.");
  if (Date.parse(row.expires_at) <= now.getTime()) {
    throw unauthorized("oauth_token_invalid", "These token credentials have expired; authorize the consumer again.");
  }
  const account = toAccount(row);
  if (!account.active) throw unauthorized("oauth_token_invalid", "The account of these token credentials is disabled.");
  await useNonce(ctx.store.db, signed, token);
  await noteGrantUse(ctx, token);
  // an application acts for its owner as the owner's login would: confined alike
  const principal = accountPrincipal(ctx, account, row, row.session_id, new Date(row.expires_at));
  principal.consumerId = signed.consumer.id;
  principal.delegated = "oauth";
  return { consumerKey: signed.consumer.consumerKey, principal };
}

/** `Authorization: OAuth ...` on any other route: header and query are signed (their bodies are JSON, never signed). */
export async function authenticateOAuth(ctx: ServiceContext, request: OAuthRequest): Promise<Principal> {
  await pruneNow(ctx);
  return (await tokenPrincipal(ctx, request)).principal;
}
