import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

const FIXED_NAMES = [
  "x-content-type-options",
  "x-frame-options",
  "referrer-policy",
  "cross-origin-resource-policy",
  "cross-origin-opener-policy",
  "strict-transport-security",
] as const;
const FIXED_VALUES = ["nosniff", "DENY", "no-referrer", "same-origin", "same-origin", "max-age=31536000"] as const;
const DEFAULT_CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * Sets the headers every response carries. It runs on every response, so it is built once: plain
 * arrays (no Object.entries per request) and a callback hook (no promise per request).
 */
function securityHeaders(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  setSecurityHeaders(request, reply);
  done(null, payload);
}

/**
 * The headers themselves, for the answers that run no hook: Fastify answers a URL it cannot
 * decode (`frameworkErrors`) from a context made before any hook was added.
 */
export function setSecurityHeaders(request: FastifyRequest, reply: FastifyReply): void {
  for (let i = 0; i < FIXED_NAMES.length; i++) reply.header(FIXED_NAMES[i]!, FIXED_VALUES[i]);
  if (!reply.hasHeader("content-security-policy")) reply.header("content-security-policy", DEFAULT_CSP);
  if (!reply.hasHeader("cache-control")) reply.header("cache-control", "no-store");
  reply.header("x-request-id", request.id);
}

/**
 * Headers every response carries; a route that serves HTML sets its own CSP and keeps it. An
 * onSend hook rather than onRequest, so that a request refused before its route's handler gets
 * them too; a URL Fastify cannot decode runs no hook and gets them from setSecurityHeaders.
 */
export function installSecurityHeaders(app: FastifyInstance): void {
  app.addHook("onSend", securityHeaders);
}
