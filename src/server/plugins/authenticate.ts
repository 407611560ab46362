import type { FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import { routeGate } from "../../contract/policy/index.js";
import type { Access } from "../../contract/route.js";
import { readOAuthRequest } from "../oauth1/request.js";
import { ProblemError } from "../problem-error.js";
import { authenticateApiToken } from "../services/api-token-auth.js";
import { looksLikeApiToken } from "../services/api-tokens.js";
import { authenticateChallenged, NO_TOKEN_CHALLENGE, refusedToken } from "../services/bearer-challenge.js";
import { authenticateOAuth } from "../services/oauth-signed-requests.js";
import type { Principal, ServiceContext } from "../services/service-context.js";
import { originOf } from "./request-origin.js";

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
  }
}

const SPACE = 0x20;
const TAB = 0x09;

/** Whether `text` starts with the lower-case ASCII `prefix`, in any case (what a /^prefix/i test does). */
function startsWithAsciiIgnoringCase(text: string, prefix: string): boolean {
  if (text.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    const expected = prefix.charCodeAt(i);
    const actual = text.charCodeAt(i);
    // | 0x20 folds A-Z onto a-z, and only letters are folded (it would also turn NUL into a space)
    if (actual !== expected && !(expected >= 0x61 && expected <= 0x7a && (actual | 0x20) === expected)) return false;
  }
  return true;
}

/** `OAuth` followed by a space, a tab or nothing: /^OAuth(?:[ \t]|$)/i without a regular expression. */
export function isOAuthHeader(header: string): boolean {
  if (!startsWithAsciiIgnoringCase(header, "oauth")) return false;
  const next = header.charCodeAt(5);
  return header.length === 5 || next === SPACE || next === TAB;
}

/**
 * The token of `Bearer <token>`: one or more spaces after the scheme, a token without spaces,
 * trailing spaces allowed (what /^Bearer +([^ ]+) *$/i accepts); undefined for anything else.
 */
export function bearerToken(header: string): string | undefined {
  if (!startsWithAsciiIgnoringCase(header, "bearer ")) return undefined;
  let start = 7;
  while (header.charCodeAt(start) === SPACE) start++;
  let end = header.length;
  while (end > start && header.charCodeAt(end - 1) === SPACE) end--;
  if (start === end) return undefined;
  const space = header.indexOf(" ", start);
  if (space !== -1 && space < end) return undefined;
  return header.slice(start, end);
}

async function resolvePrincipal(ctx: ServiceContext, request: FastifyRequest): Promise<Principal> {
  const header = request.headers.authorization;
  if (!header)
    throw new ProblemError("token_missing", "This operation needs a Bearer token; log in first.", {
      headers: NO_TOKEN_CHALLENGE,
    });
  // token credentials act exactly as a Bearer JWT of the user who approved them (spec 1.2)
  // header and query are signed (the bodies of these routes are JSON, never signed)
  if (isOAuthHeader(header)) {
    return authenticateOAuth(ctx, readOAuthRequest(request, { publicUrl: ctx.publicUrl, withBody: false }));
  }
  const token = bearerToken(header);
  if (!token) throw refusedToken("token_invalid", "The Authorization header is not 'Bearer <token>'.");
  // an API token (spec 1.7) is told from a JWT by its prefix, which no JWT (base64url JSON) has
  if (looksLikeApiToken(token)) return authenticateApiToken(ctx, token, originOf(request));
  return authenticateChallenged(ctx, token);
}

/**
 * The one gate of every route that needs a credential: who is calling, and may it do this, as the
 * access policy's rule of the route says (contract/policy/gate.ts). Undefined for a public route,
 * which then runs no hook at all. Built once per route.
 */
export function authorize(ctx: ServiceContext, access: Access): onRequestHookHandler | undefined {
  if (access.public) return undefined;
  const gate = routeGate(access);
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const principal = await resolvePrincipal(ctx, request);
    principal.origin = originOf(request);
    request.principal = principal;
    const refusal = gate(principal);
    if (refusal) throw new ProblemError(refusal.code, refusal.message);
  };
}

/**
 * Who sent a request to a public route, when it carries a credential that holds: for the audit
 * trail of what staff trigger through a public flow (a reset link). A credential that does not
 * hold is ignored: the public route answers as it does to anyone.
 */
export async function optionalPrincipal(ctx: ServiceContext, request: FastifyRequest): Promise<Principal | undefined> {
  if (!request.headers.authorization) return undefined;
  try {
    const principal = await resolvePrincipal(ctx, request);
    principal.origin = originOf(request);
    return principal;
  } catch (error) {
    if (error instanceof ProblemError) return undefined;
    throw error;
  }
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new ProblemError("token_missing", "This operation needs a credential.");
  return request.principal;
}
