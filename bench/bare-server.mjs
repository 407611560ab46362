// The reference for the throughput ratio in bench/run.mjs: a bare Fastify server (default options,
// no logger, no plugins) whose one route answers GET /x with a fixed JSON object shaped and sized
// like a bizctl event (GET /api/crm/v1/events/{code}, about 170 bytes).
// Listens on 127.0.0.1, on the port given as the first argument (default 0: a free one), and
// announces itself on stderr: "bare server listening on http://127.0.0.1:PORT".
import Fastify from "fastify";

const EVENT = {
  code: "E1",
  name: "x",
  startsAt: "2027-01-10T09:00:00Z",
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
  createdBy: "admin",
  version: 1,
};

const app = Fastify();
app.get("/x", async () => EVENT);

const url = await app.listen({ host: "127.0.0.1", port: Number(process.argv[2] ?? 0) });
process.stderr.write(`bare server listening on ${url}\n`);

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
