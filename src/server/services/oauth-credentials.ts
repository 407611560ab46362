/**
 * The OAuth 1.0a provider's /oAuth endpoint (RFC 5849 section 2): temporary credentials, the
 * owner's approval, token credentials, and the identity of a request signed with them. Every
 * check that can fail does so before anything is written.
 */
import { createHash, randomBytes } from "node:crypto";
import { OAUTH_TEMPORARY_TTL_SECONDS, OAUTH_TOKEN_TTL_SECONDS, OUT_OF_BAND } from "../../contract/oauth.js";
import type { OAuthRequest } from "../oauth1/request.js";
import { constantTimeEqual, percentEncode } from "../oauth1/signature.js";
import { ProblemError } from "../problem-error.js";
import * as repo from "../store/oauth-repo.js";
import { createSession } from "../store/sessions-repo.js";
import { audit } from "./audit.js";
import { authenticateChallenged, NO_TOKEN_CHALLENGE } from "./bearer-challenge.js";
import {
  assertSignature,
  preflight,
  pruneNow,
  tokenPrincipal,
  unauthorized,
  useNonce,
} from "./oauth-signed-requests.js";
import { randomToken } from "./random-token.js";
import type { RequestOrigin, ServiceContext } from "./service-context.js";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

function formEncode(pairs: Record<string, string>): string {
  return Object.entries(pairs)
    .map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`)
    .join("&");
}

/** Who sent a request to the endpoint, as the route saw it: the Bearer token of `Authorization`, if any, and where it came from. */
export interface Caller {
  bearer: string | undefined;
  origin: RequestOrigin;
}

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
async function approve(ctx: ServiceContext, caller: Caller, request: OAuthRequest): Promise<Approval> {
  if (!caller.bearer) {
    throw new ProblemError(
      "token_missing",
      "Approving temporary credentials needs the resource owner's Bearer token (log in first).",
      { headers: NO_TOKEN_CHALLENGE },
    );
  }
  const owner = await authenticateChallenged(ctx, caller.bearer);
  return approveFor(ctx, owner, request.oauth.get("oauth_token")!, caller.origin);
}

/**
 * The owner's approval, however the owner was proven (a Bearer login, the consent page's
 * password): a verifier, and where to send the owner. An owner who may do nothing but change a
 * temporary password or enroll a second factor (`--require-mfa`) approves nothing either, on
 * every path: the grant would act beyond what its owner's own login may.
 */
export async function approveFor(
  ctx: ServiceContext,
  owner: { userId: string; userName: string; firstLogin: boolean; mfaEnrollmentRequired?: boolean },
  token: string,
  origin: RequestOrigin,
): Promise<Approval> {
  if (owner.firstLogin) {
    throw new ProblemError(
      "password_change_required",
      "Your password is temporary; change it before approving access (`bizctl auth change-password`, or POST /auth/ChangePassWithLastPass).",
    );
  }
  if (owner.mfaEnrollmentRequired) {
    throw new ProblemError(
      "mfa_enrollment_required",
      "This server requires a second factor of your role: enroll one before approving access (`bizctl auth mfa enroll`, or POST /auth/mfa/totp).",
    );
  }
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

export type EndpointAnswer =
  | { kind: "form"; body: string }
  | { kind: "json"; body: unknown }
  | { kind: "redirect"; location: string };

/** The /oAuth endpoint, dispatched by what the request carries (spec section 1.2). */
export async function handleEndpoint(
  ctx: ServiceContext,
  request: OAuthRequest,
  caller: Caller,
): Promise<EndpointAnswer> {
  const p = request.oauth;
  // some clients send an empty oauth_token with a temporary credentials request: it is no token
  const hasToken = !!p.get("oauth_token");
  await pruneNow(ctx);
  if (!p.has("oauth_signature")) {
    if (hasToken && !p.has("oauth_consumer_key")) {
      const approval = await approve(ctx, caller, request);
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
