import type { FastifyInstance, HTTPMethods } from "fastify";
import { ProblemError } from "../problem-error.js";

/** The methods a client may try on any path; the others (TRACE, WebDAV's) stay unrouted, 404. */
const ANSWERED: HTTPMethods[] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/**
 * The router ignores case and a trailing slash, so `/api/crm/v1/events` and `/api/crm/v1/events/`
 * are one path: the methods of both are that path's.
 */
const pathKey = (url: string) => (url.length > 1 ? url.replace(/\/$/, "") : url).toLowerCase();

/**
 * RFC 9110 on every routed path: another method answers 405 with `Allow` (section 15.5.6), and
 * `OPTIONS` answers 204 with `Allow` (section 9.3.7), instead of a 404 that says the path is not
 * there. Call before the routes are added; the returned function adds the answers once they are.
 */
export function collectAllowedMethods(app: FastifyInstance): () => void {
  const byPath = new Map<string, { url: string; methods: Set<string> }>();
  app.addHook("onRoute", (route) => {
    const key = pathKey(route.url);
    const path = byPath.get(key) ?? { url: route.url, methods: new Set<string>() };
    for (const method of [route.method].flat()) path.methods.add(method);
    byPath.set(key, path);
  });
  return () => {
    for (const { url, methods } of [...byPath.values()]) {
      // GET routes answer HEAD too (Fastify's exposeHeadRoutes), whether or not onRoute saw it
      if (methods.has("GET")) methods.add("HEAD");
      const allow = [...ANSWERED.filter((m) => methods.has(m)), "OPTIONS"].join(", ");
      const others = ANSWERED.filter((m) => !methods.has(m));
      if (!methods.has("OPTIONS")) {
        app.route({
          method: "OPTIONS",
          url,
          schema: { hide: true },
          handler: async (_request, reply) => reply.status(204).header("allow", allow).send(),
        });
      }
      if (others.length === 0) continue;
      app.route({
        method: others,
        url,
        schema: { hide: true },
        // refused before the body is read: the answer is 405 whatever the body is, or its type
        onRequest: async (request) => {
          throw new ProblemError("method_not_allowed", `${request.method} is not allowed here; use ${allow}.`, {
            headers: { allow },
          });
        },
        handler: async () => undefined,
      });
    }
  };
}
