import type { FastifyInstance } from "fastify";
import type { Tracing } from "../tracing/tracing.js";

/**
 * Each request's span (started beside its id, genReqId) is the active one for everything the
 * request does, its hooks, handler and statements included, and ends with the answer. The hook
 * runs first of all the app's onRequest hooks, so that authentication and rate limits are in it.
 */
export function installTracing(app: FastifyInstance, tracing: Tracing): void {
  app.addHook("onRequest", (request, _reply, done) => {
    const traceId = tracing.traceId(request.raw);
    // every line the request logs carries its trace beside its own id
    if (traceId) request.log = request.log.child({ traceId });
    tracing.enterRequest(request.raw, done);
  });
  app.addHook("onResponse", (request, reply, done) => {
    tracing.endRequest(request.raw, request.routeOptions.url ?? "", reply.statusCode);
    done();
  });
}
