// The trigger-kept event count on PostgreSQL: writers on different connections (other instances,
// a long import transaction) must not queue on one counter row, the total stays exact, and the
// count rows do not grow with the events a transaction writes.
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

  /** The kept counts against a count of the rows themselves. */
  async function keptAndCounted(client: pg.Client) {
    const kept = await client.query<{ type: string | null; n: string }>(
      `select null as type, sum(n)::text as n from events_count
       union all select type_key, sum(n)::text from events_type_count group by type_key having sum(n) <> 0`,
    );
    const counted = await client.query<{ type: string | null; n: string }>(
      `select null as type, count(*)::text as n from events where import_id is null
       union all select lower(type), count(*)::text from events where import_id is null and type is not null group by 1`,
    );
    const byType = (rows: { type: string | null; n: string }[]) =>
      Object.fromEntries(rows.map((r) => [r.type ?? "(all)", Number(r.n)]));
    return { kept: byType(kept.rows), counted: byType(counted.rows) };
  }

  const manyRows = (prefix: string, n: number, importId: string | null = null) =>
    `insert into events (code_key, code, name, type, starts_at, created_at, updated_at, version, import_id)
     select lower('${prefix}-' || i), '${prefix}-' || i, 'many', (array['webinar', 'Call', null])[1 + i % 3],
       '2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', 1, ${importId ? `'${importId}'` : "null"}
     from generate_series(1, ${n}) as i`;

  const scenarios: { name: string; statements: string[] }[] = [
    {
      name: "four statements of 500 events in one transaction",
      statements: [1, 2, 3, 4].map((k) => manyRows(`M${k}`, 500)),
    },
    { name: "rows an import keeps hidden", statements: [manyRows("H", 300, "import-1")] },
    {
      name: "a change of type, of one event and of many",
      statements: [
        "update events set type = 'Webinar' where code_key = 'm1-1'",
        "update events set type = 'visit' where code_key like 'm2-%' and type = 'Call'",
        "update events set type = null where code_key like 'm3-%'",
      ],
    },
    {
      name: "the reveal of the hidden rows",
      statements: [
        "update events_count set n = n + (select count(*) from events where import_id = 'import-1') where id = 0",
        `insert into events_type_count as c (type_key, slot, n) select lower(type), 0, count(*) from events
        where import_id = 'import-1' and type is not null group by lower(type)
        on conflict (type_key, slot) do update set n = c.n + excluded.n`,
        "update events set import_id = null where import_id = 'import-1'",
      ],
    },
    {
      name: "deletes, of visible and of hidden rows",
      statements: [
        manyRows("G", 50, "import-2"),
        "delete from events where code_key like 'm4-%' or import_id = 'import-2'",
      ],
    },
  ];

  it.each(scenarios)("the counts stay exact: $name", async ({ statements }) => {
    const { client } = await connect();
    await client.query("begin");
    for (const statement of statements) await client.query(statement);
    await client.query("commit");
    const { kept, counted } = await keptAndCounted(client);
    expect(kept).toEqual(counted);
  });

  it("a transaction writing 2,000 events leaves the count rows one page long", async () => {
    const { client } = await connect();
    await client.query("begin");
    for (const k of [1, 2, 3, 4]) await client.query(manyRows(`P${k}`, 500));
    await client.query("commit");
    const { rows } = await client.query<{ pages: string }>(
      "select (pg_relation_size('events_count') / current_setting('block_size')::int)::text as pages",
    );
    // a row trigger wrote 2,000 versions of one count row, none prunable before the commit
    expect(Number(rows[0]!.pages)).toBe(1);
  });

  it("a batch that moves the row count by a tenth gathers the planner's statistics again", async () => {
    const { client } = await connect();
    const items = Array.from({ length: 400 }, (_, i) => ({
      code: `STAT-${i}`,
      name: "counted",
      startsAt: "2027-01-01T10:00:00Z",
    }));
    const written = await server.call("POST", "/api/crm/v1/events/batch", { items });
    expect(written.statusCode).toBe(200);
    // what the planner believes the table holds, against what it holds
    const { rows } = await client.query<{ seen: number; n: string }>(
      "select reltuples::float8 as seen, (select count(*) from events)::text as n from pg_class where oid = 'events'::regclass",
    );
    expect(rows[0]!.seen).toBe(Number(rows[0]!.n));
  });
});
