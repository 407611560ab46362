import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/scim-groups.js";
import { preconditionsOf } from "../http/preconditions.js";
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
    return created;
  });
  registerRoute(app, ctx, contract.replaceGroup, async (request) =>
    groups.replaceGroup(
      ctx,
      principalOf(request),
      request.params.id,
      request.body as Body,
      preconditionsOf(request.headers),
    ),
  );
  registerRoute(app, ctx, contract.patchGroup, async (request, reply) => {
    const patched = await groups.patchGroup(
      ctx,
      principalOf(request),
      request.params.id,
      request.body,
      request.query,
      preconditionsOf(request.headers),
    );
    // the new ETag goes with the 204 too: the next conditional write names it without a read
    if (patched.body === undefined) reply.status(204);
    return patched;
  });
  registerRoute(app, ctx, contract.deleteGroup, async (request, reply) => {
    await groups.deleteGroup(ctx, principalOf(request), request.params.id, preconditionsOf(request.headers));
    return reply.status(204).send();
  });
}
