import type { FastifyInstance } from "fastify";
import { patchResource as patchRoute } from "../../contract/resource-patch.js";
import * as contract from "../../contract/resources.js";
import { preconditionsOf } from "../http/preconditions.js";
import { principalOf } from "../plugins/authenticate.js";
import { patchResource } from "../services/resource-patch.js";
import * as resources from "../services/resources.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

type Body = Record<string, unknown>;

export function resourceRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.listResources, async (request) =>
    resources.listResources(ctx, principalOf(request), request.query),
  );
  registerRoute(app, ctx, contract.getResource, async (request) =>
    resources.getResource(ctx, principalOf(request), request.params.resourceId, request.query),
  );
  registerRoute(app, ctx, contract.createResource, async (request, reply) => {
    const created = await resources.createResource(ctx, principalOf(request), request.body as Body);
    reply.status(201).header("location", created.location);
    return created;
  });
  registerRoute(app, ctx, contract.replaceResource, async (request) =>
    resources.replaceResource(
      ctx,
      principalOf(request),
      request.params.resourceId,
      request.body as Body,
      preconditionsOf(request.headers),
    ),
  );
  registerRoute(app, ctx, patchRoute, async (request) =>
    patchResource(ctx, principalOf(request), request.params.resourceId, request.body, preconditionsOf(request.headers)),
  );
  registerRoute(app, ctx, contract.deleteResource, async (request, reply) => {
    await resources.deleteResource(
      ctx,
      principalOf(request),
      request.params.resourceId,
      preconditionsOf(request.headers),
    );
    return reply.status(204).send();
  });
}
