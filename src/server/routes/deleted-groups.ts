import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/deleted-groups.js";
import { principalOf } from "../plugins/authenticate.js";
import * as deleted from "../services/deleted-groups.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

export function deletedGroupRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.listDeletedGroups, async () => deleted.listDeletedGroups(ctx));
  registerRoute(app, ctx, contract.restoreDeletedGroup, async (request) =>
    deleted.restoreDeletedGroup(ctx, principalOf(request), request.params.id),
  );
  registerRoute(app, ctx, contract.purgeDeletedGroup, async (request, reply) => {
    await deleted.purgeDeletedGroup(ctx, principalOf(request), request.params.id);
    return reply.status(204).send();
  });
}
