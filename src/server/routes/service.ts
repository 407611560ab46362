import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/service.js";
import { ProblemError } from "../problems.js";
import type { ServiceContext } from "../services/context.js";
import { ping } from "../store/migrations.js";
import { registerRoute } from "./register.js";

export function serviceRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.health, async () => ({ status: "ok" as const }));
  registerRoute(app, ctx, contract.ready, async () => {
    try {
      await ping(ctx.store.db);
    } catch {
      throw new ProblemError("service_unavailable", "The database is not reachable.");
    }
    return { status: "ready" as const };
  });
  registerRoute(app, ctx, contract.jwks, async (_request, reply) => {
    reply.header("cache-control", "public, max-age=300");
    return ctx.keys.jwks();
  });
}
