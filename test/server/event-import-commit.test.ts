import { CompiledQuery, sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { parseListQuery } from "../../src/server/services/events.js";
import { listEventsQueries } from "../../src/server/store/events-repo.js";
import { STORES, startPostgresTestServer } from "../helpers/postgres.js";
import { type Call, loginToken, problemOf, USER_PASSWORD, useTestServer } from "../helpers/server.js";

/**
 * Atomic imports with quotas, committed without holding other writers back: the events are
 * written hidden, a chunk per transaction, and shown all at once. Readers never see part of an
 * import; a create and a login made while an import commits are answered before it ends; a
 * failure leaves nothing behind.
 */

const EVENTS = "/api/crm/v1/events";
const BATCH = `${EVENTS}/batch`;
const IMPORTS = `${EVENTS}/imports`;

const event = (code: string, extra: Record<string, unknown> = {}) => ({
  code,
  name: `Event ${code}`,
  type: "webinar",
  startsAt: "2027-05-01T09:00:00Z",
  ...extra,
});

describe.each(STORES)("atomic imports on %s", (_store, start) => {
  const server = useTestServer(
    {
      loginRateLimit: { max: 10_000, timeWindowMs: 60_000 },
      imports: { maxItems: 25_500, maxBytes: 8 * 1024 * 1024, maxOpen: 2 },
    },
    start,
  );
  const admin = server.call;
  let member: Call;
  let counter = 0;

  beforeAll(async () => {
    member = (await server.signIn({ userName: "mia.member", roles: ["member"] })).call;
  });

  /** A member of its own: the open-imports quota counts per user. */
  async function freshMember(): Promise<Call> {
    const userName = `m${++counter}-${crypto.randomUUID().slice(0, 6)}`;
    return (await server.signIn({ userName, roles: ["member"] })).call;
  }

  const prefix = () => `I${++counter}-${crypto.randomUUID().slice(0, 6)}`;

  async function openImport(call: Call, onConflict = "fail"): Promise<string> {
    const opened = await call("POST", IMPORTS, { onConflict });
    expect(opened.statusCode, opened.body).toBe(201);
    return (opened.json() as { id: string }).id;
  }

  async function stage(call: Call, id: string, codes: string[], extra: Record<string, unknown> = {}) {
    for (let i = 0; i < codes.length; i += 1000) {
      const staged = await call("POST", BATCH, {
        import: id,
        items: codes.slice(i, i + 1000).map((c) => event(c, extra)),
      });
      expect(staged.statusCode, staged.body).toBe(200);
    }
  }

  const codes = (p: string, n: number) => Array.from({ length: n }, (_, i) => `${p}-${String(i).padStart(6, "0")}`);

  /** Every row of the events table, hidden ones too, and how many of them are hidden. */
  async function rawCounts() {
    const { rows } = await sql<{ n: number | string; hidden: number | string }>`select count(*) as n,
      count(import_id) as hidden from events`.execute(server.app.services.store.db);
    return { all: Number(rows[0]!.n), hidden: Number(rows[0]!.hidden) };
  }

  const total = async (query = "") =>
    ((await admin("GET", `${EVENTS}?pagesize=1${query}`)).json() as { total: number }).total;

  // ------------------------------------------------------------------ quotas
  it.each([
    { name: "more events than --import-max-items", batches: 26, size: 1000, extra: {} },
    {
      name: "more bytes than --import-max-mb",
      batches: 20,
      size: 30,
      extra: { description: "x".repeat(9000), customFields: { notes: "y".repeat(15_000) } },
    },
  ])(
    "refuses a batch that would take an import past its quota ($name): 409 quota_exceeded, nothing staged",
    async ({ batches, size, extra }) => {
      const user = await freshMember();
      const id = await openImport(user);
      let refusedAt = -1;
      for (let b = 0; b < batches && refusedAt < 0; b++) {
        const response = await user("POST", BATCH, {
          import: id,
          items: codes(prefix(), size).map((c) => event(c, extra)),
        });
        if (response.statusCode === 409) {
          problemOf(response, 409, "quota_exceeded");
          refusedAt = b;
        } else expect(response.statusCode, response.body).toBe(200);
      }
      expect(refusedAt).toBeGreaterThan(0);
      // the import is as it was before the refused batch: what was staged still commits
      const commit = await user("POST", `${IMPORTS}/${id}/commit`, {});
      expect(commit.json()).toMatchObject({ committed: true, created: refusedAt * size });
    },
  );

  it("refuses a third open import of one user, and takes one again once another is aborted", async () => {
    const user = await freshMember();
    const first = await openImport(user);
    const second = await openImport(user);
    const third = problemOf(await user("POST", IMPORTS, {}), 409, "quota_exceeded");
    expect(third.detail).toMatch(/2 imports open/);
    // another user's imports are its own
    const other = await openImport(await freshMember());
    expect((await user("DELETE", `${IMPORTS}/${second}`)).statusCode).toBe(204);
    const again = await openImport(user);
    for (const id of [first, again]) expect((await user("DELETE", `${IMPORTS}/${id}`)).statusCode).toBe(204);
    expect(other).toEqual(expect.any(String));
  });

  // ------------------------------------------------------------------ visibility and interleaving
  it("shows an import all at once, while a create and a login made during its commit are answered before it ends", async () => {
    const p = prefix();
    const existing = `${p}-update-me`;
    expect((await admin("POST", EVENTS, event(existing, { name: "Before" }))).statusCode).toBe(201);
    const id = await openImport(admin, "update");
    const size = 20_000;
    await stage(admin, id, [...codes(p, size), existing]);
    const before = await total();
    const beforeType = await total(`&filter=${encodeURIComponent('type eq "webinar"')}`);

    let settled = false;
    const commit = admin("POST", `${IMPORTS}/${id}/commit`, {}).finally(() => {
      settled = true;
    });
    // wait until the commit has written hidden rows, then write and read while it goes on
    while ((await rawCounts()).hidden === 0 && !settled) await new Promise((resolve) => setTimeout(resolve, 5));
    const during: { settledBeforeCreate: boolean; settledBeforeLogin: boolean; totals: number[] } = {
      settledBeforeCreate: true,
      settledBeforeLogin: true,
      totals: [],
    };
    const created = await member("POST", EVENTS, event(`${p}-during`));
    during.settledBeforeCreate = settled;
    expect(created.statusCode, created.body).toBe(201);
    await loginToken(server.app, "mia.member", USER_PASSWORD);
    during.settledBeforeLogin = settled;
    // inject() answers within promise callbacks: each look gives the event loop a turn, as a
    // network client's requests would
    const pause = () => new Promise((resolve) => setTimeout(resolve, 2));
    while (!settled) {
      await pause();
      // the commit's rows show before its answer reaches us: whether it had settled is taken
      // before the reads, and the reads must agree with each other and with that
      const settledBefore = settled;
      during.totals.push(await total());
      const updated = (await admin("GET", `${EVENTS}/${existing}`)).json() as { name: string };
      const newEvent = (await admin("GET", `${EVENTS}/${p}-000000`)).statusCode;
      // all at once and for good: once its update shows, so do its new events
      if (updated.name !== "Before") expect(newEvent).toBe(200);
      if (settledBefore) expect([updated.name, newEvent]).toEqual([`Event ${existing}`, 200]);
    }
    const answer = (await commit).json() as Record<string, unknown>;
    expect(answer).toMatchObject({ committed: true, created: size, updated: 1, failures: [] });
    expect(during.settledBeforeCreate, "the create waited for the whole commit").toBe(false);
    expect(during.settledBeforeLogin, "the login waited for the whole commit").toBe(false);
    // never a part of the import: the total before it (and the one create), or after it
    for (const seen of during.totals) expect([before + 1, before + 1 + size]).toContain(seen);
    expect(await total()).toBe(before + 1 + size);
    expect(await total(`&filter=${encodeURIComponent('type eq "webinar"')}`)).toBe(beforeType + 1 + size);
    expect(((await admin("GET", `${EVENTS}/${existing}`)).json() as { name: string; version: number }).name).toBe(
      `Event ${existing}`,
    );
    expect((await rawCounts()).hidden).toBe(0);
  });

  it.each([
    { name: "a conflict in the last chunk", dryRun: false },
    { name: "a dry run", dryRun: true },
  ])("leaves nothing behind after $name", async ({ dryRun }) => {
    const p = prefix();
    const taken = `${p}-taken`;
    expect((await admin("POST", EVENTS, event(taken))).statusCode).toBe(201);
    const id = await openImport(admin);
    await stage(admin, id, [...codes(p, 2500), ...(dryRun ? [] : [taken])]);
    const before = await rawCounts();
    const beforeTotal = await total();
    const answer = (await admin("POST", `${IMPORTS}/${id}/commit`, { dryRun })).json() as {
      committed: boolean;
      failures: { code: string; problem: { code: string } }[];
    };
    expect(answer.committed).toBe(false);
    expect(answer.failures.map((f) => f.code)).toEqual(dryRun ? [] : [taken]);
    expect(await rawCounts()).toEqual(before);
    expect(await total()).toBe(beforeTotal);
    problemOf(await admin("POST", `${IMPORTS}/${id}/commit`, {}), 404, "not_found");
  });

  it("refuses a second commit, and more events, while one commit runs", async () => {
    const id = await openImport(admin);
    await stage(admin, id, codes(prefix(), 5000));
    const [first, second] = await Promise.all([
      admin("POST", `${IMPORTS}/${id}/commit`, {}),
      new Promise((resolve) => setTimeout(resolve, 20)).then(() =>
        admin("POST", BATCH, { import: id, items: [event(`${prefix()}-late`)] }),
      ),
    ]);
    expect(first.json()).toMatchObject({ committed: true, created: 5000 });
    // refused as being committed, or not found once it is done: never staged into a commit under way
    expect([409, 404]).toContain(second.statusCode);
    expect((await rawCounts()).hidden).toBe(0);
  });

  it("an offset page never shows a hidden row, and shows the same rows once none is hidden", async () => {
    const p = prefix();
    const member = await freshMember();
    const id = await openImport(member);
    const db = server.app.services.store.db;
    const visible = codes(p, 3);
    for (const [i, code] of visible.entries()) {
      expect((await admin("POST", EVENTS, event(code, { startsAt: `1990-01-0${i + 2}T00:00:00Z` }))).statusCode).toBe(
        201,
      );
    }
    // the earliest of all: were it shown, every page by offset would move by one
    await sql`insert into events (code_key, code, name, starts_at, created_at, updated_at, version, import_id)
      values (${`${p}-hidden`.toLowerCase()}, ${`${p}-hidden`}, 'x', '1990-01-01T00:00:00.000Z', '2027-01-01', '2027-01-01', 1, ${id})`.execute(
      db,
    );
    const byOffset = async () => {
      const seen: string[] = [];
      for (const page of [1, 2, 3]) {
        const listed = await admin("GET", `${EVENTS}?order=startsAt&pagesize=1&page=${page}`);
        expect(listed.statusCode, listed.body).toBe(200);
        seen.push(...(listed.json() as { data: { code: string }[] }).data.map((e) => e.code));
      }
      return seen;
    };
    expect(await byOffset()).toEqual(visible);
    await sql`delete from events where import_id = ${id}`.execute(db);
    expect(await byOffset()).toEqual(visible);
    await member("DELETE", `${IMPORTS}/${id}`);
  });

  it("gives up a commit that died half-way: its hidden rows go at the next import", async () => {
    const p = prefix();
    const member = await freshMember();
    const id = await openImport(member);
    await stage(member, id, codes(p, 10));
    const db = server.app.services.store.db;
    // as a process that wrote a chunk and stopped, an hour and more ago
    await db
      .updateTable("event_imports")
      .set({ state: "committing", commit_started_at: new Date(Date.now() - 2 * 3600_000).toISOString() })
      .where("id", "=", id)
      .execute();
    await sql`insert into events (code_key, code, name, starts_at, created_at, updated_at, version, import_id)
      values (${`${p}-dead`.toLowerCase()}, ${`${p}-dead`}, 'x', '2027-01-01T00:00:00.000Z', '2027-01-01', '2027-01-01', 1, ${id})`.execute(
      db,
    );
    expect((await rawCounts()).hidden).toBe(1);
    // its code is taken while it is hidden, but nobody sees it
    problemOf(await admin("GET", `${EVENTS}/${p}-dead`), 404, "not_found");
    const next = await openImport(member);
    expect((await rawCounts()).hidden).toBe(0);
    expect((await admin("POST", EVENTS, event(`${p}-dead`))).statusCode).toBe(201);
    await member("DELETE", `${IMPORTS}/${next}`);
  });
});

describe("the first page after a large atomic import on PostgreSQL", () => {
  const server = useTestServer(
    { loginRateLimit: { max: 10_000, timeWindowMs: 60_000 }, imports: { maxItems: 25_500, maxBytes: 8 * 1024 * 1024 } },
    startPostgresTestServer,
  );

  /** The plan PostgreSQL picks, by itself, for the first page of the list in its default order. */
  async function firstPagePlan(): Promise<string> {
    const db = server.app.services.store.db;
    const { sort } = parseListQuery({}, "postgres");
    const [firstPage] = listEventsQueries(db, { sort, limit: 21 });
    const compiled = firstPage!(21).compile();
    const { rows } = await db.executeQuery<{ "QUERY PLAN": string }>(
      CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]),
    );
    return rows.map((r) => r["QUERY PLAN"]).join("\n");
  }

  it("is read through the index, not by scanning and sorting every event", async () => {
    const opened = await server.call("POST", IMPORTS, { onConflict: "fail" });
    const { id } = opened.json() as { id: string };
    for (let batch = 0; batch < 5; batch++) {
      const items = Array.from({ length: 1000 }, (_, i) => event(`BIG-${batch}-${String(i).padStart(4, "0")}`));
      expect((await server.call("POST", BATCH, { import: id, items })).statusCode).toBe(200);
    }
    const committed = await server.call("POST", `${IMPORTS}/${id}/commit`, {});
    expect(committed.json()).toMatchObject({ committed: true, created: 5000 });
    const plan = await firstPagePlan();
    expect(plan).toContain("Index Scan using events_starts_at_idx");
    expect(plan).not.toMatch(/Seq Scan|Sort/);
  });
});
