import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/auth.js";
import { principalOf } from "../plugins/authenticate.js";
import * as accounts from "../services/accounts.js";
import type { ServiceContext } from "../services/context.js";
import { registerRoute } from "./register.js";

export function authRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.login, async (request) =>
    accounts.login(ctx, request.body.userName, request.body.password),
  );
  registerRoute(app, ctx, contract.logout, async (request, reply) => {
    await accounts.logout(ctx, principalOf(request));
    return reply.status(204).send();
  });
  registerRoute(app, ctx, contract.isLogged, async (request) => accounts.whoAmI(principalOf(request)));
  registerRoute(app, ctx, contract.isFirstLogin, async (request) => accounts.isFirstLogin(ctx, principalOf(request)));
  registerRoute(app, ctx, contract.isFirstLoginOf, async (request) =>
    accounts.isFirstLogin(ctx, principalOf(request), request.params.employeeId),
  );
  registerRoute(app, ctx, contract.changePassword, async (request, reply) => {
    await accounts.changePassword(ctx, principalOf(request), request.body.lastPassword, request.body.newPassword);
    return reply.status(204).send();
  });
}
