import type { FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import type { Access } from "../../contract/route.js";
import { authenticateOAuth } from "../oauth/provider.js";
import { ProblemError } from "../problems.js";
import { authenticateBearer } from "../services/accounts.js";
import type { Principal, ServiceContext } from "../services/context.js";

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
  }
}

const BEARER_CHALLENGE = { "www-authenticate": 'Bearer realm="bizctl"' };

async function resolvePrincipal(ctx: ServiceContext, request: FastifyRequest): Promise<Principal> {
  const header = request.headers.authorization;
  if (!header)
    throw new ProblemError("token_missing", "This operation needs a Bearer token; log in first.", {
      headers: BEARER_CHALLENGE,
    });
  // token credentials act exactly as a Bearer JWT of the user who approved them (spec 1.2)
  if (/^OAuth(?:[ \t]|$)/i.test(header)) return authenticateOAuth(ctx, request);
  const match = /^Bearer +([^ ]+) *$/i.exec(header);
  if (!match?.[1]) {
    throw new ProblemError("token_invalid", "The Authorization header is not 'Bearer <token>'.", {
      headers: BEARER_CHALLENGE,
    });
  }
  try {
    return await authenticateBearer(ctx, match[1]);
  } catch (error) {
    if (error instanceof ProblemError && error.status === 401) {
      throw new ProblemError(error.code, error.detail, { headers: BEARER_CHALLENGE });
    }
    throw error;
  }
}

/** The one gate of every route: who is calling, and may a caller of that role do this. */
export function authorize(ctx: ServiceContext, access: Access): onRequestHookHandler {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    if (access.public) return;
    const principal = await resolvePrincipal(ctx, request);
    request.principal = principal;
    if (principal.firstLogin && !access.duringFirstLogin) {
      throw new ProblemError(
        "password_change_required",
        "Your password is temporary; change it first (POST /auth/ChangePassWithLastPass).",
      );
    }
    if (!principal.roles.some((role) => access.roles.includes(role))) {
      throw new ProblemError("forbidden", `This operation needs one of the roles ${access.roles.join(", ")}.`);
    }
  };
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new ProblemError("token_missing", "This operation needs a credential.");
  return request.principal;
}
