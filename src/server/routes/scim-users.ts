import type { FastifyInstance, FastifyReply } from "fastify";
import * as contract from "../../contract/scim-users.js";
import { preconditionsOf } from "../http/preconditions.js";
import { principalOf } from "../plugins/authenticate.js";
import * as users from "../services/scim-users.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

type Body = Record<string, unknown>;

/** /Me answers for the caller's User, and says where that User lives (RFC 7644 section 3.11). */
function asMe(reply: FastifyReply, result: { body: Body; etag: string }) {
  reply.header("content-location", `${contract.USERS_PATH}/${String(result.body.id)}`);
  return result;
}

export function userRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.listUsers, async (request) =>
    users.listUsers(ctx, principalOf(request), request.query),
  );
  registerRoute(app, ctx, contract.getUser, async (request) =>
    users.getUser(ctx, principalOf(request), request.params.id, request.query),
  );
  registerRoute(app, ctx, contract.createUser, async (request, reply) => {
    const created = await users.createUser(ctx, principalOf(request), request.body as Body);
    reply.status(201).header("location", created.location);
    return created;
  });
  registerRoute(app, ctx, contract.replaceUser, async (request) =>
    users.replaceUser(
      ctx,
      principalOf(request),
      request.params.id,
      request.body as Body,
      preconditionsOf(request.headers),
    ),
  );
  registerRoute(app, ctx, contract.patchUser, async (request) =>
    users.patchUser(ctx, principalOf(request), request.params.id, request.body, preconditionsOf(request.headers)),
  );
  registerRoute(app, ctx, contract.deleteUser, async (request, reply) => {
    await users.deleteUser(ctx, principalOf(request), request.params.id, preconditionsOf(request.headers));
    return reply.status(204).send();
  });
  registerRoute(app, ctx, contract.getMe, async (request, reply) => {
    const principal = principalOf(request);
    return asMe(reply, await users.getUser(ctx, principal, principal.userId, request.query));
  });
  registerRoute(app, ctx, contract.replaceMe, async (request, reply) => {
    const principal = principalOf(request);
    const body = request.body as Body;
    return asMe(
      reply,
      await users.replaceUser(ctx, principal, principal.userId, body, preconditionsOf(request.headers)),
    );
  });
  registerRoute(app, ctx, contract.patchMe, async (request, reply) => {
    const principal = principalOf(request);
    const patched = await users.patchUser(
      ctx,
      principal,
      principal.userId,
      request.body,
      preconditionsOf(request.headers),
    );
    return asMe(reply, patched);
  });
}
