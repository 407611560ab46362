import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/scim-groups.js";
import { principalOf } from "../plugins/authenticate.js";
import * as groups from "../services/scim-groups.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

type Body = Record<string, unknown>;

export function groupRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.listGroups, async (request) =>
    groups.listGroups(ctx, principalOf(request), request.query),
  );
  registerRoute(app, ctx, contract.getGroup, async (request) =>
    groups.getGroup(ctx, principalOf(request), request.params.id, request.query),
  );
  registerRoute(app, ctx, contract.createGroup, async (request, reply) => {
    const created = await groups.createGroup(ctx, principalOf(request), request.body as Body);
    reply.status(201).header("location", created.location);
    return created.body;
  });
  registerRoute(app, ctx, contract.replaceGroup, async (request) =>
    groups.replaceGroup(ctx, principalOf(request), request.params.id, request.body as Body),
  );
  registerRoute(app, ctx, contract.patchGroup, async (request, reply) => {
    const patched = await groups.patchGroup(ctx, principalOf(request), request.params.id, request.body, request.query);
    if (patched === undefined) return reply.status(204).send();
    return patched;
  });
  registerRoute(app, ctx, contract.deleteGroup, async (request, reply) => {
    await groups.deleteGroup(ctx, principalOf(request), request.params.id);
    return reply.status(204).send();
  });
}
