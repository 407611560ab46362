import type { FastifyInstance, FastifyRequest, HTTPMethods } from "fastify";
import { routablePath } from "../http/routable-path.js";
import { ProblemError } from "../problem-error.js";

// RFC 9110 on every routed path: another method answers 405 with `Allow` (section 15.5.6), and
// `OPTIONS` answers 204 with `Allow` (section 9.3.7), instead of a 404 that says the path is not
// there. Both are answers of the not-found handler (problem-replies.ts), which finds the routed
// path here. They were routes of their own, for every other method of every path: the router
// builds a tree per method, and Fastify a context per route, which was most of the time an
// embedded command spent building the app to serve one request.

/** The methods a client may try on any path; the others (TRACE, WebDAV's) stay unrouted, 404. */
const ANSWERED: HTTPMethods[] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/** A routed path, as the router matches it: by segment, any case, a parameter any one segment. */
interface RoutedPath {
  url: string;
  segments: string[];
  methods: Set<string>;
  allow: string;
}

/** The segments of a path as the router compares them (case and a trailing or doubled slash ignored). */
const segmentsOf = (path: string) => path.toLowerCase().split("/").filter(Boolean);

/** How specific a pattern's segment is: the router tries a static segment, then a parameter, then a wildcard. */
const rank = (segment: string) => (segment.startsWith(":") ? 1 : segment === "*" ? 2 : 0);

function matches(pattern: string[], path: string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const segment = pattern[i]!;
    if (segment === "*") return true;
    if (i >= path.length || (rank(segment) === 0 && segment !== path[i])) return false;
  }
  return pattern.length === path.length;
}

/** Whether pattern `a` wins over `b` where both match: the first segment that differs in kind decides. */
function moreSpecific(a: string[], b: string[]): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (rank(a[i]!) !== rank(b[i]!)) return rank(a[i]!) < rank(b[i]!);
  }
  return false;
}

/** Each app's routed paths, collected as its routes are added. */
const routedPaths = new WeakMap<FastifyInstance, Map<string, RoutedPath>>();

/**
 * The routed path (as the router would pick it among every route's path) that a request's path
 * (`url`, its own by default) falls on, whatever the method; undefined when there is none.
 */
export function routedPath(request: FastifyRequest, url: string = request.url): RoutedPath | undefined {
  const path = segmentsOf(routablePath(url));
  let best: RoutedPath | undefined;
  for (const candidate of routedPaths.get(request.server)?.values() ?? []) {
    if (matches(candidate.segments, path) && (!best || moreSpecific(candidate.segments, best.segments))) {
      best = candidate;
    }
  }
  return best;
}

/**
 * The `Allow` value for a request's path, or undefined when no route serves the path or the
 * request's method is not one a client may try on it.
 */
export function allowedMethods(request: FastifyRequest, url: string = request.url): string | undefined {
  if (request.method !== "OPTIONS" && !ANSWERED.includes(request.method as HTTPMethods)) return undefined;
  return routedPath(request, url)?.allow;
}

/**
 * Call before the routes are added; the returned function, once they are, knows each path's
 * methods, and adds a 405 route where a path would otherwise be served by another path's route of
 * that method: `/api/crm/v1/events/batch` (POST) is not the event `batch`, for a GET either.
 */
export function collectAllowedMethods(app: FastifyInstance): () => void {
  const byPath = new Map<string, RoutedPath>();
  routedPaths.set(app, byPath);
  let collecting = true;
  app.addHook("onRoute", (route) => {
    if (!collecting) return;
    const segments = segmentsOf(route.url);
    const key = segments.join("/");
    const path = byPath.get(key) ?? { url: route.url, segments, methods: new Set<string>(), allow: "" };
    for (const method of [route.method].flat()) path.methods.add(method);
    byPath.set(key, path);
  });
  return () => {
    collecting = false;
    const paths = [...byPath.values()];
    for (const path of paths) {
      // GET routes answer HEAD too (Fastify's exposeHeadRoutes), whether or not onRoute saw it
      if (path.methods.has("GET")) path.methods.add("HEAD");
      path.allow = [...ANSWERED.filter((m) => path.methods.has(m)), "OPTIONS"].join(", ");
    }
    // the methods of other paths that match this one (a parameter where it has a segment): the
    // router would serve this path's requests of those methods with their routes
    const servedElsewhere = (path: RoutedPath) => {
      const methods = new Set<string>();
      for (const other of paths) {
        if (other !== path && matches(other.segments, path.segments)) for (const m of other.methods) methods.add(m);
      }
      return methods;
    };
    const shadowed = paths.map((path) => {
      const elsewhere = servedElsewhere(path);
      return { path, others: ANSWERED.filter((m) => !path.methods.has(m) && elsewhere.has(m)) };
    });
    for (const { path, others } of shadowed) {
      if (others.length === 0) continue;
      const { allow } = path;
      app.route({
        method: others,
        url: path.url,
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
