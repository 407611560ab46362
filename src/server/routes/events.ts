import type { FastifyInstance } from "fastify";
import * as contract from "../../contract/events.js";
import { buildPath, type QueryOf } from "../../contract/route.js";
import { preconditionsOf } from "../http/preconditions.js";
import { principalOf } from "../plugins/authenticate.js";
import * as batch from "../services/event-batch.js";
import * as events from "../services/events.js";
import type { ServiceContext } from "../services/service-context.js";
import { registerRoute } from "./register.js";

type ListQuery = QueryOf<typeof contract.listEvents>;

/**
 * RFC 8288 links, keeping the other parameters: first, prev and last by page number, next by
 * cursor (with its page number, for people) so that following next never re-reads what came
 * before. A cursor page knows no last page: it has no total.
 */
function pageLinks(query: ListQuery, page: number, totalPages: number | undefined, next?: string): string {
  const link = (target: number, rel: string, cursor?: string) => {
    const { cursor: _previous, ...kept } = query;
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(kept)) if (value !== undefined) params.set(name, String(value));
    params.set("page", String(target));
    if (cursor) params.set("cursor", cursor);
    return `<${contract.EVENTS_PATH}?${params}>; rel="${rel}"`;
  };
  const last = totalPages === undefined ? undefined : Math.max(totalPages, 1);
  const links = [link(1, "first")];
  if (page > 1) links.push(link(last === undefined ? page - 1 : Math.min(page - 1, last), "prev"));
  if (next) links.push(link(page + 1, "next", next));
  if (last !== undefined) links.push(link(last, "last"));
  return links.join(", ");
}

const location = (code: string) => buildPath(contract.getEvent.path, { code });

export function eventRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerRoute(app, ctx, contract.listEvents, async (request, reply) => {
    const { body, next } = await events.listEvents(ctx, request.query);
    reply.header("link", pageLinks(request.query, body.page, body.totalPages, next));
    return body;
  });
  registerRoute(app, ctx, contract.getEvent, async (request) =>
    events.getEvent(ctx, request.params.code, request.query),
  );
  registerRoute(app, ctx, contract.createEvent, async (request, reply) => {
    const created = await events.createEvent(ctx, principalOf(request), request.body, request.query);
    reply.status(201).header("location", location(created.body.code));
    return created;
  });
  registerRoute(app, ctx, contract.updateEvent, async (request) =>
    events.replaceEvent(
      ctx,
      principalOf(request),
      request.params.code,
      request.body,
      preconditionsOf(request.headers),
      request.query,
    ),
  );
  registerRoute(app, ctx, contract.batchEvents, async (request) =>
    batch.batchEvents(ctx, principalOf(request), request.body),
  );
  registerRoute(app, ctx, contract.deleteEvents, async (request) =>
    events.deleteEventsByCode(ctx, principalOf(request), request.body.codes),
  );
  registerRoute(app, ctx, contract.startEventImport, async (request, reply) => {
    const started = await batch.startImport(ctx, principalOf(request), request.body.onConflict);
    reply.status(201).header("location", buildPath(contract.abortEventImport.path, { id: started.id }));
    return started;
  });
  registerRoute(app, ctx, contract.commitEventImport, async (request) =>
    batch.commitImport(ctx, principalOf(request), request.params.id, request.body.dryRun),
  );
  registerRoute(app, ctx, contract.abortEventImport, async (request, reply) => {
    await batch.abortImport(ctx, principalOf(request), request.params.id);
    return reply.status(204).send();
  });
  registerRoute(app, ctx, contract.deleteEvent, async (request, reply) => {
    await events.deleteEvent(
      ctx,
      principalOf(request),
      request.params.code,
      preconditionsOf(request.headers),
      request.query,
    );
    return reply.status(204).send();
  });
}
