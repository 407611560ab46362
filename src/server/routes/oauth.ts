import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import * as contract from "../../contract/oauth.js";
import { FORM_MEDIA_TYPE, firstFormValues, hasFormBody, readOAuthRequest } from "../oauth1/request.js";
import { authorizePage } from "../pages/authorize-page.js";
import { bearerToken, principalOf } from "../plugins/authenticate.js";
import { originOf } from "../plugins/request-origin.js";
import { ProblemError } from "../problem-error.js";
import * as page from "../services/oauth-authorization-page.js";
import { handleEndpoint } from "../services/oauth-credentials.js";
import * as grants from "../services/oauth-grants.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

/**
 * Which part of the authorization page this request is, if any: a browser's unsigned GET with a
 * temporary token that asks for HTML ("show"), or the page's own form coming back ("submit").
 * Anything signed or carrying an Authorization header stays with the protocol endpoint.
 */
function pagePart(request: FastifyRequest): "show" | "submit" | undefined {
  if (request.headers.authorization) return undefined;
  if (request.method === "GET") {
    if (!/\btext\/html\b/i.test(String(request.headers.accept ?? ""))) return undefined;
    const query = firstFormValues(request.url.includes("?") ? request.url.slice(request.url.indexOf("?") + 1) : "");
    return query?.get("oauth_token") && !query.has("oauth_signature") ? "show" : undefined;
  }
  if (request.method !== "POST" || !hasFormBody(request)) return undefined;
  const form = firstFormValues(request.body as string);
  return form?.has("csrf_token") && !form.has("oauth_signature") ? "submit" : undefined;
}

/** The page's sign-in spends the per-client budget of /auth/login (its limiter throws a 429 error). */
function loginBudget(loginLimit: onRequestHookHandler, request: FastifyRequest, reply: FastifyReply): page.LoginBudget {
  return async () => {
    try {
      await loginLimit.call(request.server, request, reply, () => {});
      return undefined;
    } catch (error) {
      if ((error as { statusCode?: unknown }).statusCode !== 429) throw error;
      return { retryAfter: reply.getHeader("retry-after") };
    }
  };
}

/**
 * The OAuth endpoint and the token administration, in a scope of their own: only here is a
 * form body accepted (kept raw, so that repeated names survive and `+` is decoded by the
 * signature code); every other route stays JSON-only.
 */
export function oauthRoutes(
  app: FastifyInstance,
  ctx: ServiceContext,
  options: { loginLimit: onRequestHookHandler },
): void {
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
      const part = pagePart(request);
      if (part) {
        const visit = { url: request.url, form: request.body as string | undefined, origin: originOf(request) };
        const answer =
          part === "show"
            ? await page.showPage(ctx, visit)
            : await page.submitPage(ctx, visit, loginBudget(options.loginLimit, request, reply));
        if (answer.kind === "page")
          for (const [name, value] of Object.entries(answer.headers ?? {})) reply.header(name, value);
        reply.header("cache-control", "no-store");
        if (answer.kind === "redirect") return reply.redirect(answer.location, answer.status);
        const { html, csp } = authorizePage(answer.view, answer.callback);
        return reply
          .status(answer.status)
          .header("content-security-policy", csp)
          .type("text/html; charset=utf-8")
          .send(html);
      }
      const oauthRequest = readOAuthRequest(request, { publicUrl: ctx.publicUrl, withBody: true });
      const caller = { bearer: bearerToken(request.headers.authorization ?? ""), origin: originOf(request) };
      const answer = await handleEndpoint(ctx, oauthRequest, caller);
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
