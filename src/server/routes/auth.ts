import { normalizeIP } from "@fastify/rate-limit";
import type { FastifyInstance, onRequestHookHandler } from "fastify";
import * as contract from "../../contract/auth.js";
import { resetPage } from "../pages/reset-page.js";
import { optionalPrincipal, principalOf } from "../plugins/authenticate.js";
import { originOf } from "../plugins/request-origin.js";
import { ProblemError } from "../problem-error.js";
import * as accounts from "../services/accounts.js";
import * as recovery from "../services/recovery.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

export interface AuthRouteOptions {
  /** per-client limit on login and renewPassword */
  rateLimit: { max: number; timeWindowMs: number };
}

/** The login limiter is returned so that every other place a password is typed spends the same budget. */
export function authRoutes(
  app: FastifyInstance,
  ctx: ServiceContext,
  options: AuthRouteOptions,
): { loginLimit: onRequestHookHandler } {
  // one limiter per operation, so that its aliases (/auth/renewPassword) share the budget; the
  // operation is in the key because limiters made this way share one key space in Redis
  const limiter = (operation: string) =>
    app.rateLimit({
      max: options.rateLimit.max,
      timeWindow: options.rateLimit.timeWindowMs,
      keyGenerator: (request) => `${operation}:${normalizeIP(request.ip)}`,
    });
  const loginLimit = [limiter("login")];
  const renewLimit = [limiter("renewPassword")];
  registerRoute(
    app,
    ctx,
    contract.login,
    async (request) =>
      counted(ctx, () =>
        // request.ip honours --trust-proxy as the rate limiter's key does (which masks IPv6 to a
        // subnet: not what a person reading the session list wants to see)
        accounts.login(ctx, request.body.userName, request.body.password, originOf(request), request.body.otp),
      ),
    loginLimit,
  );
  registerRoute(
    app,
    ctx,
    contract.renewPassword,
    async (request, reply) =>
      reply
        .status(202)
        .send(
          await recovery.requestPasswordReset(
            ctx,
            request.body,
            originOf(request),
            await optionalPrincipal(ctx, request),
          ),
        ),
    renewLimit,
  );
  registerRoute(app, ctx, contract.resetPassword, async (request, reply) => {
    await recovery.resetPassword(ctx, request.body.token, request.body.newPassword, originOf(request));
    return reply.status(204).send();
  });
  registerRoute(app, ctx, contract.resetPasswordPage, async (request, reply) => {
    const page = resetPage(request.query.invitation === "1" ? "invitation" : "reset");
    return reply.header("content-security-policy", page.csp).type("text/html; charset=utf-8").send(page.html);
  });
  registerRoute(app, ctx, contract.unlock, async (request, reply) => {
    await accounts.unlock(ctx, principalOf(request), request.params.employeeId);
    return reply.status(204).send();
  });
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
  return { loginLimit: loginLimit[0]! };
}

/** A login, counted by its outcome: "success", or the code of the problem that refused it. */
async function counted<T>(ctx: ServiceContext, login: () => Promise<T>): Promise<T> {
  try {
    const result = await login();
    ctx.metrics.login("success");
    return result;
  } catch (error) {
    ctx.metrics.login(error instanceof ProblemError ? error.code : "error");
    throw error;
  }
}
