import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/access.js";
import { principalOf } from "../plugins/authenticate.js";
import { explainAccess } from "../services/access-explain.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

export function accessRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.explainAccess, async (request) =>
    explainAccess(ctx, principalOf(request), request.params.id, request.query),
  );
}
