import type { FastifyInstance } from "fastify";
import { patchResource as patchRoute } from "../../contract/resource-patch.js";
import * as contract from "../../contract/resources.js";
import { preconditionsOf } from "../http/preconditions.js";
import { principalOf } from "../plugins/authenticate.js";
import {
  asResource,
  createGroupResource,
  isGroupBody,
  listGroupResources,
  listsGroups,
  resourceOrGroup,
} from "../services/resource-groups.js";
import { parseReadQuery } from "../services/resource-list-query.js";
import { patchResource } from "../services/resource-patch.js";
import * as resources from "../services/resources.js";
import * as groups from "../services/scim-groups.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

type Body = Record<string, unknown>;

/** A group's answer as /Resources gives it (its type, its location there), with its ETag. */
const groupAnswer = (ctx: ServiceContext, answer: { body: Body; etag: string }) => ({
  body: asResource(ctx, answer.body),
  etag: answer.etag,
});

export function resourceRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.listResources, async (request) =>
    listsGroups(request.query)
      ? listGroupResources(ctx, principalOf(request), request.query)
      : resources.listResources(ctx, principalOf(request), request.query),
  );
  registerRoute(app, ctx, contract.getResource, async (request) => {
    const { resourceId } = request.params;
    return resourceOrGroup(
      ctx,
      resourceId,
      () => resources.getResource(ctx, principalOf(request), resourceId, request.query),
      async () => groupAnswer(ctx, await groups.getGroup(ctx, principalOf(request), resourceId)),
      () => parseReadQuery(request.query),
    );
  });
  registerRoute(app, ctx, contract.createResource, async (request, reply) => {
    const body = request.body as Body;
    const created = isGroupBody(body)
      ? await createGroupResource(ctx, principalOf(request), body)
      : await resources.createResource(ctx, principalOf(request), body);
    reply.status(201).header("location", created.location);
    return created;
  });
  registerRoute(app, ctx, contract.replaceResource, async (request) => {
    const { resourceId } = request.params;
    const preconditions = preconditionsOf(request.headers);
    return resourceOrGroup(
      ctx,
      resourceId,
      () => resources.replaceResource(ctx, principalOf(request), resourceId, request.body as Body, preconditions),
      async () =>
        groupAnswer(
          ctx,
          await groups.replaceGroup(ctx, principalOf(request), resourceId, request.body as Body, preconditions),
        ),
    );
  });
  registerRoute(app, ctx, patchRoute, async (request) => {
    const { resourceId } = request.params;
    const preconditions = preconditionsOf(request.headers);
    return resourceOrGroup(
      ctx,
      resourceId,
      () => patchResource(ctx, principalOf(request), resourceId, request.body, preconditions),
      async () => {
        // /Resources answers a PATCH with the resource, where /Groups answers 204
        const patched = await groups.patchGroup(
          ctx,
          principalOf(request),
          resourceId,
          request.body,
          {},
          preconditions,
          true,
        );
        return groupAnswer(ctx, { body: patched.body as Body, etag: patched.etag });
      },
    );
  });
  registerRoute(app, ctx, contract.deleteResource, async (request, reply) => {
    const { resourceId } = request.params;
    const preconditions = preconditionsOf(request.headers);
    await resourceOrGroup(
      ctx,
      resourceId,
      () => resources.deleteResource(ctx, principalOf(request), resourceId, preconditions),
      () => groups.deleteGroup(ctx, principalOf(request), resourceId, preconditions),
    );
    return reply.status(204).send();
  });
}
