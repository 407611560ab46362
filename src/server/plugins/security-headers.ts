import type { FastifyInstance } from "fastify";

const HEADERS: Record<string, string> = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-resource-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
  "strict-transport-security": "max-age=31536000",
};

/** Headers every response carries; a route that serves HTML sets its own CSP and keeps it. */
export function installSecurityHeaders(app: FastifyInstance): void {
  app.addHook("onSend", async (request, reply, payload) => {
    for (const [name, value] of Object.entries(HEADERS)) reply.header(name, value);
    if (!reply.hasHeader("content-security-policy")) {
      reply.header("content-security-policy", "default-src 'none'; frame-ancestors 'none'");
    }
    if (!reply.hasHeader("cache-control")) reply.header("cache-control", "no-store");
    reply.header("x-request-id", String(request.id));
    return payload;
  });
}
