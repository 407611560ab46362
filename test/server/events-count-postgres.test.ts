// The trigger-kept event count on PostgreSQL: writers on different connections (other instances,
// a long import transaction) must not queue on one counter row, and the total stays exact.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";
import { useTestServer } from "../helpers/server.js";

const INSERT = `insert into events (code_key, code, name, starts_at, created_at, updated_at, version)
  values (lower($1), $1, 'counted', '2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', 1)`;

describe("events_count on PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const clients: pg.Client[] = [];
  // runs after the server has closed (hooks after the last test run last to first)
  afterAll(async () => {
    for (const client of clients) await client.end();
    await database?.drop();
  });
  const server = useTestServer(async () => {
    database = await createTestDatabase();
    return { secretKey: TEST_SECRET_KEY, databaseUrl: database.url };
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

    const page = await server.call("GET", "/api/crm/v1/events");
    const body = page.json() as { data: { code: string }[]; total: number };
    expect(body.data.map((e) => e.code).sort()).toEqual(["FREE-1", "HELD-1"]);
    expect(body.total).toBe(2);
  });
});
