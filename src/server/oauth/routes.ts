import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import * as contract from "../../contract/oauth.js";
import { principalOf } from "../plugins/authenticate.js";
import { ProblemError } from "../problems.js";
import { registerRoute } from "../routes/register.js";
import type { ServiceContext } from "../services/context.js";
import type { LoginLimit } from "./browser.js";
import * as browser from "./browser.js";
import * as grants from "./grants.js";
import * as provider from "./provider.js";
import { FORM_MEDIA_TYPE } from "./request.js";

/**
 * The OAuth endpoint and the token administration, in a scope of their own: only here is a
 * form body accepted (kept raw, so that repeated names survive and `+` is decoded by the
 * signature code); every other route stays JSON-only.
 */
export function oauthRoutes(app: FastifyInstance, ctx: ServiceContext, options: { loginLimit: LoginLimit }): void {
  app.register(async (scope) => {
    const decoder = new TextDecoder("utf-8", { fatal: true });
    scope.addContentTypeParser(FORM_MEDIA_TYPE, { parseAs: "buffer" }, (_request, body, done) => {
      try {
        done(null, decoder.decode(body as Buffer));
      } catch {
        done(new ProblemError("validation_failed", "The form body is not valid UTF-8."), undefined);
      }
    });

    const endpoint = async (request: FastifyRequest, reply: FastifyReply) => {
      const part = browser.pageRequest(request);
      if (part) {
        const page =
          part === "show"
            ? await browser.showPage(ctx, request)
            : await browser.submitPage(ctx, request, reply, options.loginLimit);
        reply.header("cache-control", "no-store");
        if (page.kind === "redirect") return reply.redirect(page.location, page.status);
        return reply
          .status(page.status)
          .header("content-security-policy", page.csp)
          .type("text/html; charset=utf-8")
          .send(page.html);
      }
      const answer = await provider.handleEndpoint(ctx, request);
      if (answer.kind === "redirect") return reply.redirect(answer.location, 302);
      if (answer.kind === "form") return reply.type(FORM_MEDIA_TYPE).send(answer.body);
      return answer.body;
    };
    registerRoute(scope, ctx, contract.endpointGet, endpoint);
    registerRoute(scope, ctx, contract.endpointPost, endpoint);

    registerRoute(scope, ctx, contract.listTokens, async (request) =>
      grants.listGrants(ctx, principalOf(request), request.query.userId),
    );
    registerRoute(scope, ctx, contract.revokeToken, async (request, reply) => {
      await grants.revokeGrant(ctx, principalOf(request), request.params.token);
      return reply.status(204).send();
    });
  });
}
