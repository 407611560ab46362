/**
 * The OAuth 1.0a provider (RFC 5849): temporary credentials, the owner's approval, token
 * credentials, and requests signed with them, which act exactly as a Bearer JWT of the user
 * who approved. Every check that can fail does so before anything is written.
 */
import { createHash, randomBytes } from "node:crypto";
import type { FastifyRequest } from "fastify";
import {
  OAUTH_SIGNATURE_METHODS,
  OAUTH_TEMPORARY_TTL_SECONDS,
  OAUTH_TIMESTAMP_WINDOW_SECONDS,
  OAUTH_TOKEN_TTL_SECONDS,
  type OAuthSignatureMethod,
  OUT_OF_BAND,
} from "../../contract/oauth.js";
import { originOf } from "../http/origin.js";
import { ProblemError } from "../problems.js";
import { authenticateBearer } from "../services/accounts.js";
import { audit } from "../services/audit.js";
import type { Principal, RequestOrigin, ServiceContext } from "../services/context.js";
import { randomToken } from "../services/random-token.js";
import * as repo from "../store/oauth-repo.js";
import { createSession } from "../store/sessions-repo.js";
import { toAccount } from "../store/users-repo.js";
import { noteGrantUse } from "./grants.js";
import { type OAuthRequest, readOAuthRequest } from "./request.js";
import { verifyRsaSha1 } from "./rsa.js";
import { constantTimeEqual, percentEncode, signatureBaseString, verifySignature } from "./signature.js";

export const OAUTH_CHALLENGE = { "www-authenticate": 'OAuth realm="bizctl"' };
const BEARER_CHALLENGE = { "www-authenticate": 'Bearer realm="bizctl"' };

type Unauthorized =
  | "oauth_signature_invalid"
  | "oauth_nonce_reused"
  | "oauth_timestamp_refused"
  | "oauth_token_invalid"
  | "oauth_verifier_invalid";

function unauthorized(code: Unauthorized, detail: string): ProblemError {
  return new ProblemError(code, detail, { headers: OAUTH_CHALLENGE });
}

function invalid(detail: string): ProblemError {
  return new ProblemError("validation_failed", detail);
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

function formEncode(pairs: Record<string, string>): string {
  return Object.entries(pairs)
    .map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`)
    .join("&");
}

// ---------------------------------------------------------------------------------------------
// housekeeping

const lastPrune = new WeakMap<ServiceContext, number>();

/** Expired nonces and temporary credentials go at most once a minute, on the way of a request. */
async function pruneNow(ctx: ServiceContext): Promise<void> {
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

interface Signed {
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
async function preflight(ctx: ServiceContext, request: OAuthRequest, known?: repo.ConsumerRecord): Promise<Signed> {
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

function assertSignature(signed: Signed, tokenSecret: string | undefined): void {
  const rsa = signed.method === "RSA-SHA1";
  if (rsa !== !!signed.consumer.publicKey) {
    throw unauthorized(
      "oauth_signature_invalid",
      rsa
        ? "This consumer has no public key: sign with HMAC-SHA1 or HMAC-SHA256 and its secret."
        : "This consumer is registered with an RSA public key: sign with RSA-SHA1 (its secret is not accepted).",
    );
  }
  const ok = rsa
    ? verifyRsaSha1(
        signatureBaseString(signed.request.method, signed.request.url, signed.request.params),
        signed.consumer.publicKey!,
        signed.signature,
      )
    : verifySignature({
        method: signed.request.method,
        url: signed.request.url,
        params: signed.request.params,
        signatureMethod: signed.method,
        consumerSecret: signed.consumer.secret,
        tokenSecret,
        signature: signed.signature,
      });
  if (!ok) {
    throw unauthorized(
      "oauth_signature_invalid",
      `The signature does not match the request (${signed.method} over ${signed.request.method} ${signed.request.url} and its parameters).`,
    );
  }
}

/** Accepts (consumer, token, nonce, timestamp) once; inside the transaction of what the request does. */
async function useNonce(db: ServiceContext["store"]["db"], signed: Signed, token: string): Promise<void> {
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

// ---------------------------------------------------------------------------------------------
// the four exchanges of the /oAuth endpoint

function callbackRejected(detail: string): ProblemError {
  return new ProblemError("oauth_callback_rejected", detail);
}

/**
 * The callback must be `oob` or one of the consumer's registered URLs: scheme, host, port and
 * path exactly (a query may be added), so that the provider never redirects anywhere else.
 */
function checkCallback(consumer: repo.ConsumerRecord, callback: string): string {
  if (callback === OUT_OF_BAND) return callback;
  let url: URL;
  try {
    url = new URL(callback);
  } catch {
    throw callbackRejected("oauth_callback must be an absolute URL or 'oob'.");
  }
  if (url.hash) throw callbackRejected("oauth_callback may not have a fragment.");
  if (url.username || url.password) throw callbackRejected("oauth_callback may not carry a user name or password.");
  const where = (u: URL) => `${u.protocol}//${u.host}${u.pathname}`;
  const registered = consumer.callbackUrls.some((r) => {
    try {
      return where(new URL(r)) === where(url);
    } catch {
      return false;
    }
  });
  if (!registered) {
    throw callbackRejected(
      `oauth_callback ${where(url)} is not registered for this consumer; add it to its callbackUrls, or use oob.`,
    );
  }
  return callback;
}

/** Section 2.1: consumer-signed, with `oauth_callback` and no token. */
async function temporaryCredentials(ctx: ServiceContext, request: OAuthRequest): Promise<string> {
  const signed = await preflight(ctx, request);
  assertSignature(signed, undefined);
  const callback = checkCallback(signed.consumer, request.oauth.get("oauth_callback")!);
  const now = ctx.clock();
  const token = randomToken(18);
  const secret = randomToken(32);
  await ctx.store.db.transaction().execute(async (trx) => {
    await useNonce(trx, signed, "");
    await repo.insertTemporary(trx, {
      token,
      secret,
      consumer_id: signed.consumer.id,
      callback,
      verifier_hash: null,
      user_id: null,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + OAUTH_TEMPORARY_TTL_SECONDS * 1000).toISOString(),
      authorized_at: null,
      used_at: null,
    });
  });
  return formEncode({ oauth_token: token, oauth_token_secret: secret, oauth_callback_confirmed: "true" });
}

export interface Approval {
  token: string;
  verifier: string;
  /** `oob`, or where to send the owner: the callback with oauth_token and oauth_verifier added */
  redirect?: string;
}

/** Section 2.2: the owner, proven by a Bearer JWT, approves unsigned temporary credentials. */
async function approve(ctx: ServiceContext, httpRequest: FastifyRequest, request: OAuthRequest): Promise<Approval> {
  const match = /^Bearer +([^ ]+) *$/i.exec(httpRequest.headers.authorization ?? "");
  if (!match?.[1]) {
    throw new ProblemError(
      "token_missing",
      "Approving temporary credentials needs the resource owner's Bearer token (log in first).",
      { headers: BEARER_CHALLENGE },
    );
  }
  let owner: Principal;
  try {
    owner = await authenticateBearer(ctx, match[1]);
  } catch (error) {
    if (error instanceof ProblemError && error.status === 401) {
      throw new ProblemError(error.code, error.detail, { headers: BEARER_CHALLENGE });
    }
    throw error;
  }
  if (owner.firstLogin) {
    throw new ProblemError(
      "password_change_required",
      "Your password is temporary; change it before approving access (POST /auth/ChangePassWithLastPass).",
    );
  }
  return approveFor(ctx, owner, request.oauth.get("oauth_token")!, originOf(httpRequest));
}

/** The owner's approval, however the owner was proven: a verifier, and where to send the owner. */
export async function approveFor(
  ctx: ServiceContext,
  owner: { userId: string; userName: string },
  token: string,
  origin: RequestOrigin,
): Promise<Approval> {
  const temporary = await repo.findTemporary(ctx.store.db, token);
  const now = ctx.clock();
  if (!temporary || temporary.used_at || Date.parse(temporary.expires_at) <= now.getTime()) {
    throw unauthorized("oauth_token_invalid", "These temporary credentials are unknown, used or expired.");
  }
  if (temporary.authorized_at)
    throw unauthorized("oauth_token_invalid", "These temporary credentials were already approved.");
  const oob = temporary.callback === OUT_OF_BAND;
  const verifier = oob ? typableVerifier() : randomToken(16);
  const approved = await ctx.store.db.transaction().execute(async (trx) => {
    const done = await repo.approveTemporary(trx, token, {
      userId: owner.userId,
      verifierHash: sha256(oob ? canonicalTypable(verifier) : verifier),
      nowIso: now.toISOString(),
    });
    if (done) {
      await audit(ctx, trx, {
        action: "oauth.grant.approve",
        actor: { userId: owner.userId, userName: owner.userName },
        target: { type: "OAuthConsumer", id: temporary.consumer_id },
        origin,
        details: { outOfBand: oob },
      });
    }
    return done;
  });
  if (!approved) throw unauthorized("oauth_token_invalid", "These temporary credentials were already approved.");
  if (oob) return { token, verifier };
  const redirect = new URL(temporary.callback);
  redirect.searchParams.append("oauth_token", token);
  redirect.searchParams.append("oauth_verifier", verifier);
  return { token, verifier, redirect: redirect.toString() };
}

/** Crockford's base32: no I, L, O or U, so that what a person reads is what they type. */
const TYPABLE = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** An oob verifier a person copies by hand: 50 random bits as `XXXXX-XXXXX`. */
function typableVerifier(): string {
  const chars = [...randomBytes(10)].map((byte) => TYPABLE[byte & 31]);
  return `${chars.slice(0, 5).join("")}-${chars.slice(5).join("")}`;
}

/** What was typed, read leniently: any case, dashes and spaces ignored, O as 0, I and L as 1. */
function canonicalTypable(typed: string): string {
  return typed.toUpperCase().replace(/[\s-]/g, "").replace(/O/g, "0").replace(/[IL]/g, "1");
}

/** Section 2.3: consumer + temporary token signature, with the verifier; the temporary token is spent. */
async function tokenCredentials(ctx: ServiceContext, request: OAuthRequest): Promise<string> {
  const signed = await preflight(ctx, request);
  const token = request.oauth.get("oauth_token")!;
  const temporary = await repo.findTemporary(ctx.store.db, token);
  const now = ctx.clock();
  if (!temporary || temporary.consumer_id !== signed.consumer.id) {
    throw unauthorized("oauth_token_invalid", "oauth_token is not temporary credentials issued to this consumer.");
  }
  assertSignature(signed, temporary.secret);
  if (Date.parse(temporary.expires_at) <= now.getTime()) {
    throw unauthorized("oauth_token_invalid", "These temporary credentials have expired; request new ones.");
  }
  const verifier = request.oauth.get("oauth_verifier")!;
  const expiresAt = new Date(now.getTime() + OAUTH_TOKEN_TTL_SECONDS * 1000);
  const issued = { token: randomToken(18), secret: randomToken(32) };
  await ctx.store.db.transaction().execute(async (trx) => {
    await useNonce(trx, signed, token);
    if (temporary.used_at) throw unauthorized("oauth_verifier_invalid", "This verifier was already used.");
    if (!temporary.authorized_at || !temporary.verifier_hash || !temporary.user_id) {
      throw unauthorized("oauth_verifier_invalid", "The resource owner has not approved these temporary credentials.");
    }
    const given = temporary.callback === OUT_OF_BAND ? canonicalTypable(verifier) : verifier;
    if (!constantTimeEqual(temporary.verifier_hash, sha256(given))) {
      throw unauthorized(
        "oauth_verifier_invalid",
        "oauth_verifier is not the verifier of these temporary credentials.",
      );
    }
    const used = await repo.useTemporary(trx, token, {
      consumerId: signed.consumer.id,
      verifierHash: temporary.verifier_hash,
      nowIso: now.toISOString(),
    });
    if (!used) throw unauthorized("oauth_verifier_invalid", "This verifier was already used.");
    const sessionId = crypto.randomUUID();
    await createSession(trx, { id: sessionId, userId: temporary.user_id, createdAt: now, expiresAt });
    await repo.insertToken(trx, {
      token: issued.token,
      secret: issued.secret,
      consumer_id: signed.consumer.id,
      user_id: temporary.user_id,
      session_id: sessionId,
      created_at: now.toISOString(),
      expires_at: expiresAt.toISOString(),
      last_used_at: null,
    });
  });
  return formEncode({ oauth_token: issued.token, oauth_token_secret: issued.secret });
}

/**
 * A request signed with token credentials: the same Principal a Bearer JWT of the approving user
 * gives, its session being the token's (so logout with it revokes it).
 */
async function tokenPrincipal(
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
  return {
    consumerKey: signed.consumer.consumerKey,
    principal: {
      userId: account.id,
      userName: account.userName,
      displayName: account.displayName,
      roles: account.roles,
      firstLogin: account.credential.firstLogin,
      sessionId: row.session_id,
      expiresAt: new Date(row.expires_at),
      consumerId: signed.consumer.id,
      delegated: "oauth",
    },
  };
}

export type EndpointAnswer =
  | { kind: "form"; body: string }
  | { kind: "json"; body: unknown }
  | { kind: "redirect"; location: string };

/** The /oAuth endpoint, dispatched by what the request carries (spec section 1.2). */
export async function handleEndpoint(ctx: ServiceContext, httpRequest: FastifyRequest): Promise<EndpointAnswer> {
  const request = readOAuthRequest(httpRequest, { publicUrl: ctx.publicUrl, withBody: true });
  const p = request.oauth;
  // some clients send an empty oauth_token with a temporary credentials request: it is no token
  const hasToken = !!p.get("oauth_token");
  await pruneNow(ctx);
  if (!p.has("oauth_signature")) {
    if (hasToken && !p.has("oauth_consumer_key")) {
      const approval = await approve(ctx, httpRequest, request);
      if (approval.redirect) return { kind: "redirect", location: approval.redirect };
      return { kind: "json", body: { oauth_token: approval.token, oauth_verifier: approval.verifier } };
    }
    throw new ProblemError(
      "oauth_parameter_absent",
      p.size
        ? "The request lacks oauth_signature."
        : "No OAuth parameters: send them in an 'Authorization: OAuth' header, the query or a form body.",
      { errors: [{ path: "/oauth_signature", message: "oauth_signature is required" }] },
    );
  }
  if (hasToken) {
    if (p.has("oauth_verifier")) return { kind: "form", body: await tokenCredentials(ctx, request) };
    const { principal, consumerKey } = await tokenPrincipal(ctx, request);
    return {
      kind: "json",
      body: {
        user: {
          id: principal.userId,
          userName: principal.userName,
          ...(principal.displayName && { displayName: principal.displayName }),
          roles: principal.roles,
        },
        consumerKey,
      },
    };
  }
  if (p.has("oauth_callback")) return { kind: "form", body: await temporaryCredentials(ctx, request) };
  // a consumer-signed request without a callback: still check what can be checked, then say what is missing
  await preflight(ctx, request);
  throw new ProblemError(
    "oauth_parameter_absent",
    "A temporary credentials request needs oauth_callback (a registered URL, or oob); other requests need oauth_token.",
    { errors: [{ path: "/oauth_callback", message: "oauth_callback is required" }] },
  );
}

/** `Authorization: OAuth ...` on any other route: header and query are signed (their bodies are JSON, never signed). */
export async function authenticateOAuth(ctx: ServiceContext, httpRequest: FastifyRequest): Promise<Principal> {
  const request = readOAuthRequest(httpRequest, { publicUrl: ctx.publicUrl, withBody: false });
  await pruneNow(ctx);
  return (await tokenPrincipal(ctx, request)).principal;
}
