import type { FastifyInstance } from "fastify";
import type { Metrics } from "../metrics/metrics.js";
import type { ServiceContext } from "../services/service-context.js";
import { queueState } from "../store/mail-queue-repo.js";
import { countOpenSessions } from "../store/sessions-repo.js";

/**
 * Reports an app to `metrics`: every answered request by its route's template (a path no route
 * serves has none, so a scan of unknown paths adds no series), and, read at each scrape, the open
 * sessions, the mail queue and PostgreSQL's pool.
 */
export function installMetrics(app: FastifyInstance, services: ServiceContext, metrics: Metrics): void {
  app.addHook("onResponse", (request, reply, done) => {
    metrics.request(request.method, request.routeOptions.url ?? "", reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  const { store, clock } = services;
  metrics.watch({
    openSessions: () => countOpenSessions(store.db, clock().toISOString()),
    mailQueue: async () => {
      const { depth, oldest } = await queueState(store.db);
      const age = oldest ? (clock().getTime() - Date.parse(oldest)) / 1000 : 0;
      return { depth, oldestAgeSeconds: Math.max(0, age) };
    },
    ...(store.pool && { pool: store.pool }),
  });
}
