import type { Worker } from "node:cluster";
import { buildApp } from "./app.js";
import { type ListenOptions, listenForMetricsOf, startServer } from "./listen.js";
import type { MetricsListener } from "./metrics/listener.js";

// node:cluster (six of Node's modules) and pino are loaded by the `server start` that uses them,
// not with this file: the server bundle that holds it serves the embedded commands too
const loadCluster = async () => (await import("node:cluster")).default;

export const isClusterWorker = async () => (await loadCluster()).isWorker;

interface ListeningMessage {
  bizctl: "listening";
  url: string;
}

/**
 * A worker of `server start --workers N`: the same server as a single process, which tells the
 * primary its address instead of announcing it itself.
 */
export async function startWorker(options: ListenOptions): Promise<{ closed: Promise<void> }> {
  const cluster = await loadCluster();
  const { url, closed } = await startServer(options, "primary");
  process.send?.({ bizctl: "listening", url } satisfies ListeningMessage);
  // once drained, let go of the channel to the primary, which would keep this process alive
  return {
    closed: closed.then(() => {
      cluster.worker?.disconnect();
    }),
  };
}

/** A worker that dies this soon after it started is replaced after a pause, not in a tight loop. */
const EARLY_DEATH_MS = 5_000;

/**
 * `server start --workers N`: node:cluster forks N workers that share the listening socket. The
 * primary prepares the database and the signing keys once before forking (SQLite migrations must
 * not race), replaces a worker that dies, and on SIGINT/SIGTERM passes the signal on and waits
 * until every worker has drained.
 */
export async function startCluster(
  options: ListenOptions,
  count: number,
): Promise<{ url: string; closed: Promise<void> }> {
  const [cluster, { default: pino }] = await Promise.all([loadCluster(), import("pino")]);
  const log = pino({ level: options.log ? options.log.level : "silent" }, options.log ? options.log.stream : undefined);
  await (await buildApp({ ...options, log: false })).close();

  // before any worker: a port taken fails the start with nothing forked
  let metricsListener: MetricsListener | undefined;
  if (options.metricsPort !== undefined) {
    const { clusterScrape } = await import("./metrics/prometheus.js");
    metricsListener = await listenForMetricsOf(clusterScrape(), options);
    log.info({ metrics: metricsListener.url, workers: count }, "metrics listening: every worker's, added up");
  }
  let stopping = false;
  const startedAt = new Map<Worker, number>();
  const fork = () => {
    const worker = cluster.fork();
    startedAt.set(worker, Date.now());
    log.info({ worker: worker.id, workerPid: worker.process.pid }, "worker started");
    return worker;
  };

  const url = await new Promise<string>((resolve, reject) => {
    let pending = count;
    cluster.on("message", (worker, message: Partial<ListeningMessage>) => {
      if (message?.bizctl !== "listening" || typeof message.url !== "string") return;
      log.info({ worker: worker.id, workerPid: worker.process.pid }, "worker listening");
      if (--pending === 0) resolve(message.url);
    });
    cluster.on("exit", (worker, code, signal) => {
      const lived = Date.now() - (startedAt.get(worker) ?? 0);
      startedAt.delete(worker);
      if (stopping) return;
      if (pending > 0) {
        // a worker that cannot even start (a port in use, a bad secret) will not start when forked again
        stopping = true;
        for (const other of Object.values(cluster.workers ?? {})) other?.process.kill("SIGTERM");
        void metricsListener?.close();
        reject(new Error(`a worker exited (${signal ?? code}) before the server was listening; see its log above`));
        return;
      }
      log.warn({ worker: worker.id, workerPid: worker.process.pid, code, signal }, "worker died; replacing it");
      setTimeout(fork, lived < EARLY_DEATH_MS ? 1000 : 0);
    });
    for (let i = 0; i < count; i++) fork();
  });

  const closed = new Promise<void>((resolve) => {
    // SIGTERM to every worker, whatever came here: on a terminal a SIGINT reaches the workers
    // too, and a second SIGINT would end a worker before it drained
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal, workers: startedAt.size }, "shutting down: draining every worker");
      const done = () => metricsListener?.close().then(resolve, resolve) ?? resolve();
      if (startedAt.size === 0) done();
      cluster.on("exit", () => {
        if (startedAt.size === 0) done();
      });
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGTERM");
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  return { url, closed };
}
