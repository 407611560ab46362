/**
 * POST /renewPassword must not tell, by its timing, whether an account exists. Loosely measured
 * over real HTTP on a loopback port: the medians of 50 requests each may differ by less than 20 %,
 * or by less than 2 ms (a shared 2-core machine is noisy at sub-millisecond scale).
 */
import { Worker } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caller, createResource, loginToken, startTestServer, type TestServer } from "../helpers/server.js";

const ROUNDS = 50;
const WARM_UP = 5;

/** CommonJS for `new Worker(..., { eval: true })`: alternates the two requests, one at a time, over keep-alive. */
const CLIENT = `
const { parentPort, workerData } = require("node:worker_threads");
const http = require("node:http");
const { url, rounds, warmUp } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function post(body) {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const started = performance.now();
    const req = http.request(url + "/renewPassword", {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
    }, (res) => {
      res.resume();
      res.on("end", () => {
        const elapsed = performance.now() - started;
        if (res.statusCode !== 202) reject(new Error("renewPassword answered " + res.statusCode));
        else resolve(elapsed);
      });
    });
    req.on("error", reject);
    req.end(payload);
  });
}
// the test's thread answers once the server's background mail work is done
const settled = () => new Promise((resolve) => { parentPort.once("message", resolve); parentPort.postMessage("settle"); });
(async () => {
  const existing = [];
  const missing = [];
  // interleaved, so that drift (GC, JIT, the other test worker) hits both alike; after each request
  // the server finishes the e-mail it prepares after answering, so that it does not slow the next
  for (let i = 0; i < warmUp + rounds; i++) {
    const a = await post({ userName: "timed.user" });
    await settled();
    const b = await post({ userName: "no.such.user." + i });
    await settled();
    if (i >= warmUp) { existing.push(a); missing.push(b); }
  }
  agent.destroy();
  parentPort.postMessage({ existing, missing });
})().catch((error) => { throw error; });
`;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

describe("renewPassword timing", () => {
  let server: TestServer;
  let url: string;

  beforeAll(async () => {
    server = await startTestServer({ loginRateLimit: { max: 10_000, timeWindowMs: 60_000 } });
    const admin = caller(server.app, await loginToken(server.app, server.admin.userName, server.admin.password));
    await createResource(admin, {
      resourceType: "User",
      userName: "timed.user",
      emails: [{ value: "timed.user@example.com", primary: true }],
      password: "temporary passphrase for a new hire 1",
    });
    url = await server.app.listen({ host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => server?.close());

  /**
   * The client runs in a worker thread: on the test's own thread it would wait for the server's
   * background work (the e-mail) before it could even read the answer, and time that too.
   */
  function measure(rounds: number): Promise<{ existing: number[]; missing: number[] }> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(CLIENT, { eval: true, workerData: { url, rounds, warmUp: WARM_UP } });
      worker.on("message", (message: "settle" | { existing: number[]; missing: number[] }) => {
        if (message !== "settle") return resolve(message);
        server.app.services.mailer.idle().then(() => worker.postMessage("go"), reject);
      });
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the timing client exited with ${code}`)));
    });
  }

  it("answers an existing and a non-existing account in about the same time", async () => {
    const { existing, missing } = await measure(ROUNDS);
    await server.app.services.mailer.idle();
    expect(existing).toHaveLength(ROUNDS);
    const [m1, m2] = [median(existing), median(missing)];
    const difference = Math.abs(m1 - m2);
    const relative = difference / Math.min(m1, m2);
    const summary = `medians: existing ${m1.toFixed(2)} ms, missing ${m2.toFixed(2)} ms (${(relative * 100).toFixed(1)} %)`;
    expect(relative < 0.2 || difference < 2, summary).toBe(true);
  });
});
