import { type Kysely, type RawBuilder, type Selectable, sql } from "kysely";
import { insertAudit, type NewAuditRow } from "./audit-repo.js";
import { groupCommit } from "./group-commit.js";
import { precompiled } from "./precompiled.js";
import type { EventsTable, Schema } from "./schema.js";

export type EventRow = Selectable<EventsTable>;

export interface SortKey {
  column: keyof EventsTable;
  descending: boolean;
}

/**
 * Rows an atomic import is still committing carry its id in import_id: every read here sees the
 * visible rows only (import_id null), but the import's own look-ups, which see its rows too.
 */
const eventQuery = precompiled(
  (db, codeKey) => db.selectFrom("events").selectAll().where("code_key", "=", codeKey).where("import_id", "is", null),
  1,
);

export async function findEvent(db: Kysely<Schema>, code: string): Promise<EventRow | undefined> {
  return (await eventQuery(db, code.toLowerCase()))[0];
}

export async function insertEvent(db: Kysely<Schema>, row: EventRow): Promise<void> {
  await db.insertInto("events").values(row).execute();
}

/**
 * A new event and its audit record, atomically. Concurrent creates share one commit
 * (group-commit.ts): each pays for its rows, not for a commit of its own.
 */
export const insertAuditedEvent = groupCommit(
  async (db: Kysely<Schema>, { row, record }: { row: EventRow; record: NewAuditRow }) => {
    await insertEvent(db, row);
    await insertAudit(db, record);
  },
  { atomic: true },
);

/**
 * The stored events among `codeKeys` (lower-case codes), by code key: the visible ones, and those
 * the import `importId` has written so far (another import's hidden rows are not found: their
 * codes are taken all the same, and an insert of one fails as a conflict).
 */
export async function findEvents(
  db: Kysely<Schema>,
  codeKeys: string[],
  importId?: string,
): Promise<Map<string, EventRow>> {
  const found = new Map<string, EventRow>();
  // bounded lists keep under SQLite's and PostgreSQL's limits on bound parameters
  for (let i = 0; i < codeKeys.length; i += 500) {
    const chunk = codeKeys.slice(i, i + 500);
    const rows = await db
      .selectFrom("events")
      .selectAll()
      .where("code_key", "in", chunk)
      .where((eb) =>
        importId === undefined
          ? eb("import_id", "is", null)
          : eb.or([eb("import_id", "is", null), eb("import_id", "=", importId)]),
      )
      .execute();
    for (const row of rows) found.set(row.code_key, row);
  }
  return found;
}

/** Inserts the rows whose code is free, several per statement; returns the code keys it inserted. */
export async function insertEventsIfAbsent(db: Kysely<Schema>, rows: EventRow[]): Promise<Set<string>> {
  const inserted = new Set<string>();
  // 17 columns: 100 rows stay well under either database's limit on bound parameters
  for (let i = 0; i < rows.length; i += 100) {
    const written = await db
      .insertInto("events")
      .values(rows.slice(i, i + 100))
      .onConflict((oc) => oc.column("code_key").doNothing())
      .returning("code_key")
      .execute();
    for (const row of written) inserted.add(row.code_key);
  }
  return inserted;
}

/**
 * Replaces an event by code whatever its version (an import's update by code), the version `bump`
 * past the stored one; false when there is no such row (deleted meanwhile).
 */
export async function overwriteEvent(db: Kysely<Schema>, row: EventRow, bump = 1): Promise<boolean> {
  const { code_key, code, created_at, created_by, version, import_id, ...changes } = row;
  const result = await db
    .updateTable("events")
    .set((eb) => ({ ...changes, version: eb("version", "+", bump) }))
    .where("code_key", "=", code_key)
    .where((eb) => (import_id === null ? eb("import_id", "is", null) : eb("import_id", "=", import_id)))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Writes only when the stored version is still `expectedVersion`; false when it is not. */
export async function replaceEvent(db: Kysely<Schema>, row: EventRow, expectedVersion: number): Promise<boolean> {
  const { code_key, code, created_at, created_by, ...changes } = row;
  const result = await db
    .updateTable("events")
    .set(changes)
    .where("code_key", "=", code_key)
    .where("version", "=", expectedVersion)
    .where("import_id", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteEvent(db: Kysely<Schema>, code: string, expectedVersion: number): Promise<boolean> {
  const result = await db
    .deleteFrom("events")
    .where("code_key", "=", code.toLowerCase())
    .where("version", "=", expectedVersion)
    .where("import_id", "is", null)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Deletes up to `limit` of the rows an import wrote (it failed, or was given up); how many went. */
export async function deleteImportRows(db: Kysely<Schema>, importId: string, limit: number): Promise<number> {
  const result = await db
    .deleteFrom("events")
    .where("code_key", "in", (eb) =>
      eb.selectFrom("events").select("code_key").where("import_id", "=", importId).limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Shows every row an import wrote, at once: the counts the triggers skipped for hidden rows are
 * added in bulk (in this connection's slot on PostgreSQL, as the triggers add), then import_id is
 * cleared. Returns how many rows became visible.
 */
export async function revealImportRows(
  db: Kysely<Schema>,
  dialect: "sqlite" | "postgres",
  importId: string,
): Promise<number> {
  const slot = dialect === "postgres" ? sql`pg_backend_pid() % 16` : sql`0`;
  await sql`update events_count set n = n + (select count(*) from events where import_id = ${importId})
    where id = ${slot}`.execute(db);
  await sql`insert into events_type_count as c (type_key, slot, n)
    select lower(type), ${slot}, count(*) from events where import_id = ${importId} and type is not null
    group by lower(type)
    on conflict (type_key, slot) do update set n = c.n + excluded.n`.execute(db);
  const result = await db
    .updateTable("events")
    .set({ import_id: null })
    .where("import_id", "=", importId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * PostgreSQL plans from the statistics its autovacuum gathers now and then. Gathered while an
 * import's rows were hidden, they say that almost no row has `import_id is null`, and every list
 * then reads the whole table and sorts it for its first page (550 ms at 300,000 events, against
 * a tenth of a millisecond through the index). Once a reveal has made a large share of the table
 * visible, the statistics are gathered again at once: a sample of the table, as autovacuum would
 * take, not a scan. In the revealing transaction, so that they are in place when its rows are
 * (ANALYZE counts the transaction's own changes) and the import's answer is not held back after
 * its rows show. SQLite's planner needs none (it has no statistics until ANALYZE is run).
 */
export async function refreshStatisticsAfterReveal(
  db: Kysely<Schema>,
  dialect: "sqlite" | "postgres",
  revealed: number,
): Promise<void> {
  if (dialect !== "postgres" || revealed === 0) return;
  const total = await countEvents(db);
  // autovacuum's own default: analyze once a tenth of the table has changed
  if (revealed >= total * 0.1) await sql`analyze events`.execute(db);
}

/**
 * PostgreSQL's statistics gathered again, by the writer of a batch, once the table's row count
 * has moved from the one the last ANALYZE saw by autovacuum's own rule (50 rows and a tenth).
 * Without it, on a server whose autovacuum is off or behind, an `events import` of 300,000 events
 * left the planner believing the table empty: `import_id is null` estimated at 0.5% of a few
 * pages, every list page read the whole table and sorted it (1.5 s a page; an export of 1,000
 * events/s), and a filtered first page took a bitmap scan of every match and a sort (1.9 s). The
 * kept count is exact and free to read; ANALYZE samples the table, as autovacuum would.
 */
export async function refreshStaleStatistics(db: Kysely<Schema>, dialect: "sqlite" | "postgres"): Promise<void> {
  if (dialect !== "postgres") return;
  const { rows } = await sql<{ seen: number }>`select greatest(reltuples, 0)::float8 as seen from pg_class
    where oid = 'events'::regclass`.execute(db);
  const seen = Number(rows[0]?.seen ?? 0);
  if (Math.abs((await countEvents(db)) - seen) > 50 + 0.1 * seen) await sql`analyze events`.execute(db);
}

/** Columns that never hold NULL: their order needs no NULLS clause, which lets SQLite walk an index. */
const NOT_NULL = new Set<keyof EventsTable>(["code_key", "name", "starts_at", "created_at", "updated_at"]);

export type KeyValue = string | number | null;

/** Columns holding a flag (0 or 1); every other sortable column holds text. */
const FLAGS: ReadonlySet<string> = new Set<keyof EventsTable>(["all_day"]);

/**
 * Whether `value` is one `column` can hold: the bound of a cursor is a query parameter, and a
 * string or 1e300 against PostgreSQL's integer column is a database error, not an empty page.
 */
export function fitsColumn(column: string, value: unknown): value is KeyValue {
  if (value === null) return !(NOT_NULL as ReadonlySet<string>).has(column);
  return FLAGS.has(column) ? value === 0 || value === 1 : typeof value === "string";
}

/**
 * Rows strictly after `last` in the order `sort` (the keyset of the previous page's last row), as
 * the ranges of the leading key's `(column, code_key)` index that hold them, in the list's order:
 * each a condition the planner seeks into the index with, rather than walking the index from its
 * start and filtering it (a deep page of `order=type` then cost what every page before it did).
 * NULLs sort last ascending and first descending, so on a nullable column the rows after a value
 * ascending are that value's range and then the NULLs, and after a NULL descending the NULLs left
 * and then every value: two ranges, where an OR of both would be read as neither.
 */
function afterRanges(sort: SortKey[], last: KeyValue[]): RawBuilder<boolean>[] {
  const [lead] = sort;
  if (!lead) return [sql<boolean>`1 = 0`];
  const ref = sql.ref(lead.column);
  const value = last[0] ?? null;
  const later = laterKeys(sort, last);
  if (value === null) {
    const nulls = sql<boolean>`${ref} is null and ${later}`;
    return lead.descending ? [nulls, sql<boolean>`${ref} is not null`] : [nulls];
  }
  const bound = lead.descending ? sql`${ref} <= ${value}` : sql`${ref} >= ${value}`;
  const beyond = lead.descending ? sql`${ref} < ${value}` : sql`${ref} > ${value}`;
  const [, tie] = sort;
  // An order of one field and the code's tie-break is the index's own key: as a row value the
  // range seeks past the ties of the cursor's value too, where `type = 'x' and code_key > 'k'`
  // under an OR made SQLite walk every event of that type up to the cursor.
  const values =
    sort.length === 2 && tie?.column === "code_key" && tie.descending === lead.descending && last[1] != null
      ? sql<boolean>`(${ref}, ${sql.ref("code_key")}) ${sql.raw(lead.descending ? "<" : ">")} (${value}, ${last[1]})`
      : sql<boolean>`${bound} and (${beyond} or ${later})`;
  return lead.descending || NOT_NULL.has(lead.column) ? [values] : [values, sql<boolean>`${ref} is null`];
}

/**
 * Rows after `last` whose leading key equals last's: for each later key, the keys before it equal
 * and this one beyond, with NULLs last ascending and first descending.
 */
function laterKeys(sort: SortKey[], last: KeyValue[]): RawBuilder<boolean> {
  const alternatives: RawBuilder<unknown>[] = [];
  sort.forEach((key, i) => {
    if (i === 0) return;
    const ref = sql.ref(key.column);
    const value = last[i] ?? null;
    let beyond: RawBuilder<unknown> | undefined;
    if (key.descending) beyond = value === null ? sql`${ref} is not null` : sql`${ref} < ${value}`;
    else if (value !== null)
      beyond = NOT_NULL.has(key.column) ? sql`${ref} > ${value}` : sql`(${ref} > ${value} or ${ref} is null)`;
    if (!beyond) return;
    const equal = sort
      .slice(0, i)
      .map((k, j) => (last[j] === null ? sql`${sql.ref(k.column)} is null` : sql`${sql.ref(k.column)} = ${last[j]}`));
    alternatives.push(sql`(${sql.join([...equal, beyond], sql` and `)})`);
  });
  if (alternatives.length === 0) return sql<boolean>`1 = 0`;
  return sql<boolean>`(${sql.join(alternatives, sql` or `)})`;
}

export interface ListOptions {
  where?: RawBuilder<unknown>;
  sort: SortKey[];
  limit: number;
  /** page-based: rows to skip */
  offset?: number;
  /** keyset: the sort keys of the last row already seen */
  after?: KeyValue[];
  /** no row is hidden (read in the same snapshot): the page need not test import_id */
  noneHidden?: boolean;
}

/**
 * The statements of one page, read in turn until it is full: one, or with `after` one per range of
 * the index that holds the rows after it (afterRanges); each takes the rows it may add (tests read
 * their plans).
 */
export function listEventsQueries(db: Kysely<Schema>, options: ListOptions) {
  const ranges = options.after ? afterRanges(options.sort, options.after) : [undefined];
  return ranges.map((range) => (limit: number) => pageQuery(db, options, range, limit));
}

function pageQuery(db: Kysely<Schema>, options: ListOptions, range: RawBuilder<boolean> | undefined, limit: number) {
  let query = db.selectFrom("events").selectAll();
  if (!options.noneHidden) query = query.where("import_id", "is", null);
  if (options.where) query = query.where(options.where as RawBuilder<boolean>);
  if (range) query = query.where(range);
  // a missing value sorts last in ascending order (SCIM's rule, kept for every list)
  for (const key of options.sort) {
    query = query.orderBy(key.column, (ob) => {
      const direction = key.descending ? ob.desc() : ob.asc();
      if (NOT_NULL.has(key.column)) return direction;
      return key.descending ? direction.nullsFirst() : direction.nullsLast();
    });
  }
  if (options.offset) query = query.offset(options.offset);
  return query.limit(limit);
}

async function readPage(db: Kysely<Schema>, options: ListOptions): Promise<EventRow[]> {
  const rows: EventRow[] = [];
  for (const query of listEventsQueries(db, options)) {
    rows.push(...(await query(options.limit - rows.length).execute()));
    if (rows.length >= options.limit) break;
  }
  return rows;
}

/**
 * On SQLite an offset page steps over the rows it skips in the order's index; a condition on
 * import_id, which no ordering index holds, makes it fetch each skipped row from the table too
 * (page 1,000 of 100: 9 ms without it, 1.6 s with it). Rows are hidden only while an import
 * commits, so the page first asks, in the same read transaction, whether any row is hidden at
 * all (through the partial index on import_id), and tests import_id only if so. Indexes kept
 * partial on `import_id is null` would spare the question, but would move their writes into
 * the reveal, which holds SQLite's write lock (four times as long, measured at 200,000 rows).
 * PostgreSQL fetches every skipped row from the table for its visibility anyway.
 */
export async function listEvents(
  db: Kysely<Schema>,
  options: ListOptions,
  dialect: "sqlite" | "postgres",
): Promise<EventRow[]> {
  if (dialect !== "sqlite" || !options.offset) return readPage(db, options);
  return db.connection().execute(async (connection) => {
    // deferred: a read that takes no write lock, one snapshot for both statements
    await sql`begin`.execute(connection);
    try {
      const hidden = await connection
        .selectFrom("events")
        .select("code_key")
        .where("import_id", "is not", null)
        .limit(1)
        .executeTakeFirst();
      return await readPage(connection, { ...options, noneHidden: !hidden });
    } finally {
      await sql`commit`.execute(connection);
    }
  });
}

/**
 * Without a filter, the trigger-kept count (no scan); with `typeKey` (the filter is exactly
 * `type eq` that lower-cased string), the trigger-kept count of that type; with any other
 * filter, a count over the filter's index or scan.
 */
export async function countEvents(db: Kysely<Schema>, where?: RawBuilder<unknown>, typeKey?: string): Promise<number> {
  if (!where) {
    const row = await db
      .selectFrom("events_count")
      .select((eb) => eb.fn.sum<number | string>("n").as("n"))
      .executeTakeFirstOrThrow();
    return Number(row.n ?? 0);
  }
  if (typeKey !== undefined) {
    const row = await db
      .selectFrom("events_type_count")
      .select((eb) => eb.fn.sum<number | string>("n").as("n"))
      .where("type_key", "=", typeKey)
      .executeTakeFirstOrThrow();
    return Number(row.n ?? 0);
  }
  const query = db
    .selectFrom("events")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("import_id", "is", null)
    .where(where as RawBuilder<boolean>);
  return Number((await query.executeTakeFirstOrThrow()).n);
}
