import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/deleted-users.js";
import { principalOf } from "../plugins/authenticate.js";
import * as deleted from "../services/deleted-users.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

export function deletedUserRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.listDeletedUsers, async () => deleted.listDeletedUsers(ctx));
  registerRoute(app, ctx, contract.restoreDeletedUser, async (request) =>
    deleted.restoreDeletedUser(ctx, principalOf(request), request.params.id),
  );
  registerRoute(app, ctx, contract.purgeDeletedUser, async (request, reply) => {
    await deleted.purgeDeletedUser(ctx, principalOf(request), request.params.id);
    return reply.status(204).send();
  });
}
