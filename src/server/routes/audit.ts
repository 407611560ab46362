import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/audit.js";
import { principalOf } from "../plugins/authenticate.js";
import { type AuditQuery, listAudit } from "../services/audit-list.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

/** RFC 8288 `next`, keeping the other parameters. There is no edit or delete route: the trail is append-only. */
function nextLink(query: AuditQuery, cursor: string): string {
  const { cursor: _previous, ...kept } = query;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(kept)) if (value !== undefined) params.set(name, String(value));
  params.set("cursor", cursor);
  return `<${contract.AUDIT_PATH}?${params}>; rel="next"`;
}

export function auditRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.listAudit, async (request, reply) => {
    const { body, next } = await listAudit(ctx, principalOf(request), request.query);
    if (next) reply.header("link", nextLink(request.query, next));
    return body;
  });
}
