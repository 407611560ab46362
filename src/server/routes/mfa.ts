import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/mfa.js";
import { principalOf } from "../plugins/authenticate.js";
import * as secondFactor from "../services/second-factor.js";
import { resetSecondFactor } from "../services/second-factor-reset.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

export function mfaRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.startTotp, async (request) =>
    secondFactor.startTotpEnrollment(ctx, principalOf(request)),
  );
  registerRoute(app, ctx, contract.verifyTotp, async (request) =>
    secondFactor.activateTotp(ctx, principalOf(request), request.body.code),
  );
  registerRoute(app, ctx, contract.totpStatus, async (request) => secondFactor.totpStatus(ctx, principalOf(request)));
  registerRoute(app, ctx, contract.removeTotp, async (request, reply) => {
    await secondFactor.removeTotp(ctx, principalOf(request), request.body.password, request.body.code);
    return reply.status(204).send();
  });
  registerRoute(app, ctx, contract.resetUserTotp, async (request) =>
    resetSecondFactor(ctx, principalOf(request), request.params.resourceId, request.query.reason),
  );
}
