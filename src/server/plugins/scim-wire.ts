import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import { allRoutes } from "../../contract/index.js";
import { RESOURCES_PATH } from "../../contract/resources.js";
import { SCIM_MEDIA_TYPE } from "../../contract/scim.js";
import { routedPath } from "./allowed-methods.js";

// The SCIM conventions a route of the contract may follow (RouteEntry.scim): its answers in
// application/scim+json, its query parameter names in any case. Hooks of those routes only.

declare module "fastify" {
  interface FastifyContextConfig {
    /** the SCIM conventions of the route (contract/route.ts) */
    scim?: "wire" | "query";
  }
}

export const SCIM_CONTENT_TYPE = `${SCIM_MEDIA_TYPE}; charset=utf-8`;

/** Whether the request's route is a SCIM endpoint: its errors are SCIM error bodies. */
export function isScimWire(request: FastifyRequest): boolean {
  return request.routeOptions?.config?.scim === "wire";
}

const SCIM_WIRE_PATHS = allRoutes
  .filter((route) => route.scim === "wire")
  .map((route) => route.path.split("/:")[0]!.toLowerCase());

/**
 * Whether a URL refused before routing (malformed) aimed at a SCIM endpoint, by its path: its
 * error is then a SCIM error body too.
 */
export function aimsAtScimEndpoint(url: string): boolean {
  const path = url.split("?")[0]!.toLowerCase();
  return SCIM_WIRE_PATHS.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/**
 * Whether the request's route answers in SCIM's terms (a `scimType` in its errors): the SCIM
 * endpoints and the SCIM-style /Resources, every operation of it.
 */
export function followsScim(request: FastifyRequest): boolean {
  // a request no route serves (a 405, an OPTIONS) by the routed path it falls on
  const url = request.routeOptions?.url ?? (request.is404 ? routedPath(request)?.url : undefined);
  return request.routeOptions?.config?.scim !== undefined || url?.startsWith(RESOURCES_PATH) === true;
}

/**
 * SCIM's query parameter names are case-insensitive (`sortBy`, `sortby`, `SORTBY`): the names
 * become lower case before the query is validated, so the contract lists them in lower case.
 * A name sent twice in different cases is two values, refused like any repeated parameter.
 */
export function lowerCaseQueryNames(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const query = request.query as Record<string, unknown> | undefined;
  if (!query || Object.keys(query).every((name) => name === name.toLowerCase())) {
    done();
    return;
  }
  const merged = new Map<string, unknown>();
  for (const [name, value] of Object.entries(query)) {
    const lower = name.toLowerCase();
    const before = merged.get(lower);
    merged.set(lower, before === undefined ? value : ([] as unknown[]).concat(before, value));
  }
  // fromEntries defines each name as an own property, `__proto__` too
  request.query = Object.fromEntries(merged);
  done();
}

/** A SCIM endpoint answers in application/scim+json (RFC 7644 section 3.1), its successes as its errors. */
export function scimMediaType(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  const type = reply.getHeader("content-type");
  if (typeof type === "string" && type.startsWith("application/json")) reply.header("content-type", SCIM_CONTENT_TYPE);
  done(null, payload);
}
