// The references for the throughput ratios in bench/measures/throughput.mjs: a bare Fastify server
// (default options, no plugins) whose one route answers GET /x with a fixed JSON object shaped and
// sized like a bizctl event (GET /api/crm/v1/events/{code}, about 170 bytes).
//
// `node bench/bare-server.mjs [PORT] [--log]`: without --log, no logger at all. With --log, the log
// settings of the default `bizctl server start` (kept in step with src/server/app.ts by hand, since
// this server must not import ours): pino at info on stdout, written asynchronously, with the same
// redaction paths, Fastify's own request logging off, one line per request written when it completes.
// Listens on 127.0.0.1, on PORT (default 0: a free one), and announces itself on stderr:
// "bare server listening on http://127.0.0.1:PORT".
import Fastify from "fastify";
import pino from "pino";

const EVENT = {
  code: "E1",
  name: "x",
  startsAt: "2027-01-10T09:00:00Z",
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
  createdBy: "admin",
  version: 1,
};

const args = process.argv.slice(2);
const withLog = args.includes("--log");
const port = Number(args.find((a) => /^\d+$/.test(a)) ?? 0);

const app = Fastify(
  withLog
    ? {
        logger: {
          level: "info",
          stream: pino.destination({ dest: 1, sync: false }),
          redact: [
            "req.headers.authorization",
            "req.headers.cookie",
            "*.password",
            "*.newPassword",
            "*.lastPassword",
            "*.token",
          ],
          serializers: {
            req: (req) => ({ method: req.method, url: req.url, id: req.id, remoteAddress: req.ip }),
          },
        },
        disableRequestLogging: true,
      }
    : {},
);
if (withLog) {
  app.addHook("onResponse", async (request, reply) => {
    request.log.info(
      { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime },
      "request completed",
    );
  });
}
app.get("/x", async () => EVENT);

const url = await app.listen({ host: "127.0.0.1", port });
process.stderr.write(`bare server listening on ${url}\n`);

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
