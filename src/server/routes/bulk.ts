import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/bulk.js";
import { principalOf } from "../plugins/authenticate.js";
import { runBulk } from "../services/bulk.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

export function bulkRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.bulk, async (request) => runBulk(ctx, principalOf(request), request.body));
}
