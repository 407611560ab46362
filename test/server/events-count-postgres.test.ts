// The trigger-kept event count on PostgreSQL: writers on different connections (other instances,
// a long import transaction) must not queue on one counter row, and the total stays exact.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";
import { ADMIN_PASSWORD, ADMIN_USER, bearer, loginToken, startTestServer, type TestServer } from "../helpers/server.js";

const INSERT = `insert into events (code_key, code, name, starts_at, created_at, updated_at, version)
  values (lower($1), $1, 'counted', '2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', 1)`;

describe("events_count on PostgreSQL", () => {
  let server: TestServer;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const clients: pg.Client[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
    server = await startTestServer({ secretKey: TEST_SECRET_KEY, databaseUrl: database.url });
  });
  afterAll(async () => {
    for (const client of clients) await client.end();
    await server?.close();
    await database?.drop();
  });

  async function connect(): Promise<{ client: pg.Client; slot: number }> {
    const client = new pg.Client({ connectionString: database.url });
    clients.push(client);
    await client.connect();
    const { rows } = await client.query<{ pid: number }>("select pg_backend_pid() as pid");
    return { client, slot: rows[0]!.pid % 16 };
  }

  it("an open transaction that inserted events does not hold up an insert on another connection", async () => {
    const first = await connect();
    let second = await connect();
    // two connections share a slot one time in 16: take another
    while (second.slot === first.slot) second = await connect();
    await first.client.query("begin");
    await first.client.query(INSERT, ["HELD-1"]);
    // waiting on the first transaction's counter row would fail here rather than hang
    await second.client.query("set lock_timeout = '2s'");
    await second.client.query(INSERT, ["FREE-1"]);
    await first.client.query("commit");

    const auth = bearer(await loginToken(server.app, ADMIN_USER, ADMIN_PASSWORD));
    const page = await server.app.inject({ method: "GET", url: "/api/crm/v1/events", headers: auth });
    const body = page.json() as { data: { code: string }[]; total: number };
    expect(body.data.map((e) => e.code).sort()).toEqual(["FREE-1", "HELD-1"]);
    expect(body.total).toBe(2);
  });
});
