import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/service.js";
import { ProblemError } from "../problem-error.js";
import type { ServiceContext } from "../services/service-context.js";
import { ping } from "../store/database.js";
import { registerRoute } from "./register.js";

/** Dependencies `/ready` checks besides the database: each probe says whether it answers. */
export interface ReadinessProbes {
  redis?: () => Promise<boolean>;
}

const NAMES = { database: "the database", redis: "Redis" } as const;

async function databaseAnswers(ctx: ServiceContext): Promise<boolean> {
  try {
    await ping(ctx.store.db);
    return true;
  } catch {
    return false;
  }
}

export function serviceRoutes(app: FastifyInstance, ctx: ServiceContext, probes: ReadinessProbes = {}): void {
  registerRoute(app, ctx, contract.health, async () => ({ status: "ok" as const }));
  registerRoute(app, ctx, contract.ready, async () => {
    const [database, redis] = await Promise.all([databaseAnswers(ctx), probes.redis?.()]);
    const state = (up: boolean) => (up ? ("ok" as const) : ("down" as const));
    const checks = { database: state(database), ...(redis !== undefined && { redis: state(redis) }) };
    const down = (Object.keys(checks) as (keyof typeof checks)[]).filter((name) => checks[name] === "down");
    if (down.length > 0) {
      const which = down.map((name) => NAMES[name]).join(" and ");
      const detail = `${which.charAt(0).toUpperCase()}${which.slice(1)} ${down.length > 1 ? "are" : "is"} not reachable.`;
      throw new ProblemError("service_unavailable", detail, { checks });
    }
    return { status: "ready" as const, checks };
  });
  registerRoute(app, ctx, contract.jwks, async (_request, reply) => {
    reply.header("cache-control", "public, max-age=300");
    return ctx.keys.jwks();
  });
}
