import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/diagnosis.js";
import { principalOf } from "../plugins/authenticate.js";
import { diagnoseUser } from "../services/diagnosis.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

export function diagnosisRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.diagnoseUser, async (request) =>
    diagnoseUser(ctx, principalOf(request), request.params.id),
  );
}
