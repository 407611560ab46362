import { Type } from "@sinclair/typebox";
import { defineRoute } from "./route.js";

export const health = defineRoute({
  id: "service.health",
  method: "GET",
  path: "/health",
  summary: "The process is up",
  tags: ["service"],
  access: { public: true },
  responses: { 200: Type.Object({ status: Type.Literal("ok") }) },
});

/** The state of each dependency `/ready` checks: the database always, Redis when the server uses one. */
export const ReadyChecks = Type.Object({
  database: Type.Union([Type.Literal("ok"), Type.Literal("down")]),
  redis: Type.Optional(Type.Union([Type.Literal("ok"), Type.Literal("down")])),
});

/**
 * 200 when every dependency answers; otherwise 503 `service_unavailable`, a problem document
 * whose `checks` member names the dependency that is down.
 */
export const ready = defineRoute({
  id: "service.ready",
  method: "GET",
  path: "/ready",
  summary: "The database (and Redis, when configured) is reachable",
  tags: ["service"],
  access: { public: true },
  errors: ["service_unavailable"],
  responses: { 200: Type.Object({ status: Type.Literal("ready"), checks: ReadyChecks }) },
});

export const jwks = defineRoute({
  id: "service.jwks",
  method: "GET",
  path: "/.well-known/jwks.json",
  summary: "Public keys that verify the JWTs this server issues",
  tags: ["service"],
  access: { public: true },
  responses: {
    200: Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true })) }),
  },
});

export const serviceRoutes = [health, ready, jwks] as const;
