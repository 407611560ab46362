import type { FastifyRequest } from "fastify";
import type { RequestOrigin } from "../services/service-context.js";

/** What the audit trail records of a request: its id, the client (request.ip honours --trust-proxy), its user agent. */
export function originOf(request: FastifyRequest): RequestOrigin {
  return { requestId: request.id, ip: request.ip, userAgent: request.headers["user-agent"] };
}
