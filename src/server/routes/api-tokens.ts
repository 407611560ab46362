import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/api-tokens.js";
import { buildPath } from "../../contract/route.js";
import { principalOf } from "../plugins/authenticate.js";
import * as apiTokens from "../services/api-tokens.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

export function apiTokenRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.createOwn, async (request, reply) => {
    const created = await apiTokens.createApiToken(ctx, principalOf(request), request.body);
    // where the token is revoked: it has no representation of its own beyond the list
    return reply
      .status(201)
      .header("location", buildPath(contract.revokeOwn.path, { id: created.id }))
      .send(created);
  });
  registerRoute(app, ctx, contract.listOwn, async (request) => apiTokens.listOwnApiTokens(ctx, principalOf(request)));
  registerRoute(app, ctx, contract.revokeOwn, async (request, reply) => {
    await apiTokens.revokeOwnApiToken(ctx, principalOf(request), request.params.id);
    return reply.status(204).send();
  });
  registerRoute(app, ctx, contract.listOfUser, async (request) =>
    apiTokens.listUserApiTokens(ctx, request.params.resourceId),
  );
  registerRoute(app, ctx, contract.revokeOfUser, async (request, reply) => {
    await apiTokens.revokeUserApiToken(ctx, principalOf(request), request.params.resourceId, request.params.tokenId);
    return reply.status(204).send();
  });
}
