import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/sessions.js";
import { principalOf } from "../plugins/authenticate.js";
import type { ServiceContext } from "../services/service-context.js";
import * as sessions from "../services/sessions.js";
import { registerRoute } from "./register.js";

export function sessionRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.listOwn, async (request) => sessions.listOwnSessions(ctx, principalOf(request)));
  registerRoute(app, ctx, contract.endOwnOthers, async (request) =>
    sessions.endOwnOtherSessions(ctx, principalOf(request)),
  );
  registerRoute(app, ctx, contract.endOwn, async (request, reply) => {
    await sessions.endOwnSession(ctx, principalOf(request), request.params.sessionId);
    return reply.status(204).send();
  });
  registerRoute(app, ctx, contract.listOfUser, async (request) =>
    sessions.listUserSessions(ctx, principalOf(request), request.params.resourceId),
  );
  registerRoute(app, ctx, contract.endAllOfUser, async (request) =>
    sessions.endUserSessions(ctx, principalOf(request), request.params.resourceId),
  );
  registerRoute(app, ctx, contract.endOneOfUser, async (request, reply) => {
    await sessions.endUserSessions(ctx, principalOf(request), request.params.resourceId, request.params.sessionId);
    return reply.status(204).send();
  });
}
