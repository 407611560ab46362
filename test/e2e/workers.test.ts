import { beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN,
  apiToken,
  bearerHeader,
  httpJson,
  logLinesOf,
  PASSWORD,
  type RunningServer,
  useServer,
} from "../helpers/cli.js";
import { holdLogin, statusLines } from "../helpers/held-request.js";

/** `server start --workers 2` on SQLite: one port, two processes, a dead worker replaced, a drained stop. */

interface LogLine {
  msg?: string;
  workerPid?: number;
}

const logLines = (server: RunningServer) => logLinesOf<LogLine>(server);
/** the workers that have been listening, in order */
const workerPids = (server: RunningServer) =>
  logLines(server)
    .filter((l) => l.msg === "worker listening")
    .map((l) => l.workerPid!);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((done) => setTimeout(done, 100));
  }
}

describe("server start --workers 2", () => {
  const s = useServer({ login: false, serverArgs: ["--workers", "2"] });
  let token: string;

  const call = (method: string, path: string, body?: unknown) =>
    httpJson(s.server, method, path, body, bearerHeader(token));

  beforeAll(async () => {
    token = await apiToken(s.server);
  });

  it("runs two workers behind one port, and concurrent writes on SQLite never fail", async () => {
    expect(workerPids(s.server)).toHaveLength(2);
    const statuses: number[] = [];
    for (let batch = 0; batch < 4; batch++) {
      const responses = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          call("POST", "/api/crm/v1/events", {
            code: `W-${batch}-${i}`,
            name: "Parallel",
            startsAt: "2027-03-01T10:00:00Z",
          }),
        ),
      );
      statuses.push(...responses.map((r) => r.status));
    }
    expect(statuses.filter((status) => status !== 201)).toEqual([]);
    const list = (await (await call("GET", "/api/crm/v1/events?pagesize=1")).json()) as { total: number };
    expect(list.total).toBe(120);
  });

  it("replaces a worker killed with SIGKILL while requests go on", async () => {
    const [victim] = workerPids(s.server);
    process.kill(victim!, "SIGKILL");
    await waitFor(() => workerPids(s.server).length === 3, 20_000);
    expect(logLines(s.server).some((l) => l.msg === "worker died; replacing it" && l.workerPid === victim)).toBe(true);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => call("GET", "/auth/isLogged")));
    expect(statuses.map((r) => r.status)).toEqual(Array(20).fill(200));
  }, 30_000);

  it("SIGTERM drains every worker and exits 0", async () => {
    const pids = workerPids(s.server).filter(alive);
    expect(pids).toHaveLength(2);
    expect(await s.server.stop()).toBe(0);
    await waitFor(() => pids.every((pid) => !alive(pid)), 10_000);
    expect(logLines(s.server).filter((l) => l.msg === "shutting down")).toHaveLength(2);
  }, 30_000);
});

describe("server start, a single process", () => {
  const s = useServer({ login: false });

  it("drains a request in flight, through a second SIGTERM (systemd and a primary both send one), and exits 0", async () => {
    // both signals reach the process while a login is held in flight, so the second one comes
    // during the drain; once the drain is over a late signal could end it by the signal instead
    const login = await holdLogin(s.server.url, ADMIN, PASSWORD);
    const exited = new Promise<number | null>((done) => s.server.process.once("exit", (code) => done(code)));
    s.server.process.kill("SIGTERM");
    s.server.process.kill("SIGTERM");
    await waitFor(() => logLines(s.server).some((l) => l.msg === "shutting down"), 10_000);
    const received = await login.finish();
    expect(statusLines(received)).toEqual(["HTTP/1.1 100", "HTTP/1.1 200"]);
    expect(await exited).toBe(0);
  });
});
