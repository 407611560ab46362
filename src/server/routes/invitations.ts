import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/invitations.js";
import { principalOf } from "../plugins/authenticate.js";
import { sendInvitation } from "../services/invitations.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

export function invitationRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.sendInvitation, async (request, reply) =>
    reply.status(202).send(await sendInvitation(ctx, principalOf(request), request.params.resourceId)),
  );
}
