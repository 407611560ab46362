import type { FastifyInstance } from "fastify";
import { revokeOfUser } from "../../contract/api-tokens.js";
import { buildPath } from "../../contract/route.js";
import * as contract from "../../contract/service-accounts.js";
import { principalOf } from "../plugins/authenticate.js";
import * as serviceAccounts from "../services/service-accounts.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

export function serviceAccountRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.create, async (request, reply) => {
    const created = await serviceAccounts.createServiceAccount(ctx, principalOf(request), request.body);
    return reply.status(201).header("location", `/Resources/${created.id}`).send(created);
  });
  registerRoute(app, ctx, contract.list, async () => serviceAccounts.listServiceAccounts(ctx));
  registerRoute(app, ctx, contract.createToken, async (request, reply) => {
    const created = await serviceAccounts.createServiceAccountToken(
      ctx,
      principalOf(request),
      request.params.id,
      request.body,
    );
    return reply
      .status(201)
      .header("location", buildPath(revokeOfUser.path, { resourceId: request.params.id, tokenId: created.id }))
      .send(created);
  });
}
