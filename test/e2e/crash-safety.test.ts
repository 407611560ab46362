import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bearerHeader, bizctl, makeSandbox, PASSWORD, type RunningServer, show, startServer } from "../helpers/cli.js";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";

/**
 * An acknowledged write survives a crash: several clients create and update events and users
 * against a real `server start`, the server is killed with SIGKILL at a random moment of the load,
 * and a server started again on the same data must hold every write it answered with a 2xx, at
 * the version it acknowledged.
 *
 * Each entity is written by one client only, one request at a time, so its history is a line of
 * versions. A write that was sent but not answered when the server died may or may not have been
 * committed: the entity may then be at the acknowledged version or at that one next version
 * (carrying that write's marker), and nothing else. A create never answered may be missing.
 */

const CLIENTS = 4;
const RUNS = 3;
/** the load stops on its own after this long, should the kill never come */
const LOAD_LIMIT_MS = 10_000;

type Kind = "event" | "user";

interface Written {
  version: number;
  marker: string;
}

interface Entity {
  kind: Kind;
  /** the event code or the user name, chosen by the client */
  key: string;
  /** the user's id, once a create was acknowledged */
  id?: string;
  acked?: Written;
  /** the write in flight when the server died (sent, never answered) */
  pending?: Written;
}

interface Backend {
  name: "sqlite" | "postgres";
  /** storage flags and environment for init and start; drop() removes what it created */
  prepare(root: string): Promise<{ args: string[]; env: Record<string, string>; drop(): Promise<void> }>;
}

const backends: Backend[] = [
  { name: "sqlite", prepare: async () => ({ args: [], env: {}, drop: async () => {} }) },
  {
    name: "postgres",
    prepare: async () => {
      const database = await createTestDatabase();
      return { args: ["--database", database.url], env: { BIZCTL_SECRET_KEY: TEST_SECRET_KEY }, drop: database.drop };
    },
  },
];

/** acknowledged writes of the current run, for the failure message */
const acks = { count: 0 };

const versionOf = (response: Response) => Number(/^"(\d+)"$/.exec(response.headers.get("etag") ?? "")?.[1]);

/** One client: creates its own events and users and updates them, until a request fails to connect. */
async function writer(server: RunningServer, token: string, client: number, deadline: number, entities: Entity[]) {
  const headers = { ...bearerHeader(token), "content-type": "application/json" };
  const mine: Entity[] = [];
  let n = 0;
  while (Date.now() < deadline) {
    n += 1;
    const create = mine.length === 0 || n % 3 === 0;
    const entity: Entity = create
      ? { kind: n % 2 === 0 ? "event" : "user", key: `crash-${client}-${n}` }
      : (mine[n % mine.length] as Entity);
    if (create) {
      mine.push(entity);
      entities.push(entity);
    }
    const version = (entity.acked?.version ?? 0) + 1;
    const marker = `c${client}-n${n}-v${version}`;
    entity.pending = { version, marker };
    const ifMatch: Record<string, string> = entity.acked ? { "if-match": `"${entity.acked.version}"` } : {};
    let response: Response;
    try {
      if (entity.kind === "event") {
        const body = { code: entity.key, name: marker, startsAt: "2030-01-01T10:00:00Z", description: marker };
        response = await fetch(`${server.url}/api/crm/v1/events${create ? "" : `/${entity.key}`}`, {
          method: create ? "POST" : "PUT",
          headers: { ...headers, ...ifMatch },
          body: JSON.stringify(body),
        });
      } else {
        const body = { resourceType: "User", userName: entity.key, title: marker };
        response = await fetch(`${server.url}/Resources${create ? "" : `/${entity.id}`}`, {
          method: create ? "POST" : "PUT",
          headers: { ...headers, ...ifMatch },
          body: JSON.stringify(body),
        });
      }
      if (!response.ok) throw new Error(`${entity.kind} ${entity.key}: ${response.status} ${await response.text()}`);
      const answered = (await response.json()) as { id?: string };
      if (entity.kind === "user") entity.id = answered.id;
    } catch (error) {
      // the server is gone: this write stays pending, and the client stops
      if ((error as Error).message.startsWith(`${entity.kind} ${entity.key}:`)) throw error;
      return;
    }
    const acknowledged = versionOf(response);
    if (acknowledged !== version)
      throw new Error(`${entity.key}: acknowledged version ${acknowledged}, sent ${version}`);
    entity.acked = { version, marker };
    entity.pending = undefined;
    acks.count += 1;
  }
}

/** What a server restarted on the data holds of one entity: undefined when it is missing. */
async function stored(server: RunningServer, token: string, entity: Entity): Promise<Written | undefined> {
  const headers = bearerHeader(token);
  if (entity.kind === "event") {
    const response = await fetch(`${server.url}/api/crm/v1/events/${entity.key}`, { headers });
    if (response.status === 404) return undefined;
    expect(response.status).toBe(200);
    const body = (await response.json()) as { version: number; description: string };
    return { version: body.version, marker: body.description };
  }
  const filter = encodeURIComponent(`userName eq "${entity.key}"`);
  const response = await fetch(`${server.url}/Resources?filter=${filter}`, { headers });
  expect(response.status).toBe(200);
  const list = (await response.json()) as { Resources: { id: string; title?: string; meta: { version: string } }[] };
  const [user] = list.Resources;
  if (!user) return undefined;
  if (entity.id) expect(user.id).toBe(entity.id);
  return { version: Number(/"(\d+)"/.exec(user.meta.version)?.[1]), marker: String(user.title) };
}

/** The entity after the restart is one of the states its history allows. */
function allowed(entity: Entity, found: Written | undefined): string | undefined {
  const states = [entity.acked, entity.pending].filter((s): s is Written => s !== undefined);
  if (!found) return entity.acked ? `acknowledged at version ${entity.acked.version} but missing` : undefined;
  if (states.some((s) => s.version === found.version && s.marker === found.marker)) return undefined;
  return `found version ${found.version} (${found.marker}); allowed: ${JSON.stringify(states)}`;
}

async function login(server: RunningServer): Promise<string> {
  const response = await fetch(`${server.url}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ userName: "admin", password: PASSWORD }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { token: string }).token;
}

describe.each(backends)("kill -9 during a write load ($name)", (backend) => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it.each(Array.from({ length: RUNS }, (_, run) => ({ run: run + 1 })))(
    "run $run: every acknowledged write is there after a restart, at its version",
    async () => {
      const sandbox = await makeSandbox();
      cleanups.push(() => sandbox.remove());
      const storage = await backend.prepare(sandbox.root);
      cleanups.push(() => storage.drop());
      const env = { ...sandbox.env, ...storage.env };
      const dataDir = join(sandbox.root, "data");
      const init = await bizctl(["server", "init", "--admin-user", "admin", "--password-stdin", ...storage.args], {
        env,
        input: `${PASSWORD}\n`,
      });
      expect(init.exitCode, show(init)).toBe(0);

      const first = await startServer(dataDir, { env, args: storage.args });
      cleanups.push(() => first.stop());
      const token = await login(first);
      const entities: Entity[] = [];
      acks.count = 0;
      const deadline = Date.now() + LOAD_LIMIT_MS;
      const load = Promise.all(
        Array.from({ length: CLIENTS }, (_, client) => writer(first, token, client, deadline, entities)),
      );
      // a different moment each run: early in the load, in the middle, later
      const delay = 300 + Math.floor(Math.random() * 2500);
      await new Promise((done) => setTimeout(done, delay));
      const exited = new Promise((done) => first.process.once("exit", done));
      first.process.kill("SIGKILL");
      await exited;
      await load;
      const acknowledged = entities.filter((e) => e.acked).length;
      // the kill came while the clients were writing, and they had been acknowledged some writes
      expect(Date.now()).toBeLessThan(deadline);
      expect(acknowledged).toBeGreaterThan(0);

      const second = await startServer(dataDir, { env, args: storage.args });
      cleanups.push(() => second.stop());
      const again = await login(second);
      const wrong: string[] = [];
      for (const entity of entities) {
        const problem = allowed(entity, await stored(second, again, entity));
        if (problem) wrong.push(`${entity.kind} ${entity.key}: ${problem}`);
      }
      expect(
        wrong,
        `after a kill at ${delay} ms: ${acks.count} acknowledged writes to ${entities.length} entities`,
      ).toEqual([]);
      await second.stop();
    },
    60_000,
  );
});
