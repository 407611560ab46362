import type { Static } from "@sinclair/typebox";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import type { Kysely } from "kysely";
import {
  type BatchResult,
  type commitEventImport,
  EVENT_BATCH_MAX,
  EVENT_IMPORT_TTL_HOURS,
  EventInput,
} from "../../contract/events.js";
import { ProblemError } from "../problem-error.js";
import * as imports from "../store/event-imports-repo.js";
import type { EventRow } from "../store/events-repo.js";
import * as repo from "../store/events-repo.js";
import type { Schema } from "../store/schema.js";
import { type AjvIssue, fieldIssues } from "../validation-issues.js";
import { auditBy } from "./audit.js";
import { eventRow, newEventCode } from "./events.js";
import type { Principal, ServiceContext } from "./service-context.js";

export type OnConflict = "fail" | "skip" | "update";
type Result = Static<typeof BatchResult>["results"][number];
type Problem = NonNullable<Result["problem"]>;
type CommitAnswer = Static<(typeof commitEventImport)["responses"][200]>;

export interface BatchRequest {
  items: unknown[];
  refs?: number[];
  onConflict?: OnConflict;
  dryRun?: boolean;
  import?: string;
}

// the options the server's own body validation uses, so that an item fails here as it would alone
const ajv = new Ajv({ coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: true, strict: false });
(addFormats as unknown as (instance: Ajv) => void)(ajv);
let checkEvent: ReturnType<typeof ajv.compile> | undefined;

type EventBody = Static<typeof EventInput>;

/** The problem of an item that a single create would refuse before touching the store. */
function validate(item: unknown): { body: EventBody } | { problem: Problem } {
  checkEvent ??= ajv.compile(EventInput);
  if (!checkEvent(item)) {
    const errors = fieldIssues("body", (checkEvent.errors ?? []) as unknown as AjvIssue[]);
    const detail = `The event is not valid: ${errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`;
    return { problem: { code: "validation_failed", detail, errors } };
  }
  return { body: item as EventBody };
}

const problemOf = (error: unknown): Problem | undefined =>
  error instanceof ProblemError
    ? { code: error.code, detail: error.detail, ...(error.errors && { errors: error.errors }) }
    : undefined;

class Rollback extends Error {}

interface Pending {
  results: Result[];
  counts: { created: number; updated: number; skipped: number; failed: number };
}

/** An update of a visible event that an import makes: applied when the import is revealed. */
interface DeferredUpdate {
  row: EventRow;
  /** how many of the import's items updated it: its version moves on by as many */
  bump: number;
}

/** Where an atomic import's commit writes: hidden rows of the import, its updates kept for the reveal. */
interface ImportPlacement {
  importId: string;
  deferred: Map<string, DeferredUpdate>;
}

/**
 * Applies valid items in order inside `db` (a transaction): what the store holds, and what came
 * earlier in the same batch, decide between created, updated, skipped and failed. Inserts go in
 * multi-row statements; a code another writer created meanwhile fails as a conflict. Within an
 * import's commit (`place`), rows are written hidden and updates of visible events are deferred
 * to the reveal, so that nothing shows before everything does.
 */
async function apply(
  db: Kysely<Schema>,
  principal: Principal,
  now: string,
  items: { index: number; ref?: number; body: EventBody }[],
  onConflict: OnConflict,
  out: Pending,
  place?: ImportPlacement,
): Promise<void> {
  const rows: { index: number; ref?: number; row: EventRow }[] = [];
  for (const item of items) {
    try {
      const row = eventRow(item.body.code ?? newEventCode(), item.body, {
        now,
        createdAt: now,
        createdBy: principal.userName,
        version: 1,
      });
      rows.push({ index: item.index, ref: item.ref, row: { ...row, import_id: place?.importId ?? null } });
    } catch (error) {
      const problem = problemOf(error);
      if (!problem) throw error;
      record(out, { index: item.index, ref: item.ref, status: "failed", code: item.body.code, problem });
    }
  }
  const stored = await repo.findEvents(
    db,
    rows.map((r) => r.row.code_key),
    place?.importId,
  );
  const inserts = new Map<string, { row: EventRow; result: Result }>();
  const updates = new Map<string, DeferredUpdate>();
  for (const { index, ref, row } of rows) {
    const earlier = inserts.get(row.code_key);
    const current = stored.get(row.code_key);
    const base = { index, ...(ref !== undefined && { ref }), code: row.code };
    if (!earlier && !current) {
      const result: Result = { ...base, status: "created" };
      inserts.set(row.code_key, { row, result });
      record(out, result);
    } else if (onConflict === "skip") {
      record(out, { ...base, code: (current ?? earlier?.row)?.code, status: "skipped" });
    } else if (onConflict === "fail") {
      const problem: Problem = {
        code: "conflict",
        detail:
          current && current.import_id === null
            ? `An event with code ${current.code} already exists.`
            : `The code ${row.code} came earlier in the same import.`,
      };
      record(out, { ...base, status: "failed", problem });
    } else if (earlier) {
      // updated twice in one batch: the insert takes the later fields
      earlier.row = { ...row, code: earlier.row.code };
      record(out, { ...base, code: earlier.row.code, status: "updated" });
    } else if (current) {
      // a visible event changes only when the import shows; its own rows, hidden, change now
      const pending = place && current.import_id === null ? place.deferred : updates;
      const previous = pending.get(row.code_key);
      pending.set(row.code_key, {
        row: {
          ...row,
          code: current.code,
          created_at: current.created_at,
          created_by: current.created_by,
          import_id: current.import_id,
        },
        bump: (previous?.bump ?? 0) + 1,
      });
      record(out, { ...base, code: current.code, status: "updated" });
    }
  }
  const written = await repo.insertEventsIfAbsent(
    db,
    [...inserts.values()].map((i) => i.row),
  );
  for (const [key, insert] of inserts) {
    if (written.has(key)) continue;
    // created by another writer (or held by another import) since this batch read the store
    out.counts.created--;
    record(out, {
      ...insert.result,
      status: "failed",
      problem: { code: "conflict", detail: `An event with code ${insert.row.code} already exists.` },
    });
  }
  for (const update of updates.values()) await repo.overwriteEvent(db, update.row, update.bump);
}

function record(out: Pending, result: Result): void {
  out.results.push(result);
  if (result.status !== "staged") out.counts[result.status]++;
}

/** Validates each item and returns the valid ones; an invalid one is recorded as failed. */
function validItems(request: BatchRequest, out: Pending) {
  if (request.refs && request.refs.length !== request.items.length) {
    throw new ProblemError("validation_failed", "refs must have one entry per item.", {
      errors: [{ path: "/refs", message: "must have one entry per item" }],
    });
  }
  const valid: { index: number; ref?: number; body: EventBody }[] = [];
  request.items.forEach((item, index) => {
    const ref = request.refs?.[index];
    const checked = validate(item);
    if ("problem" in checked) {
      const code = (item as { code?: unknown } | null)?.code;
      record(out, {
        index,
        ...(ref !== undefined && { ref }),
        ...(typeof code === "string" && { code }),
        status: "failed",
        problem: checked.problem,
      });
    } else valid.push({ index, ...(ref !== undefined && { ref }), body: checked.body });
  });
  return valid;
}

const emptyOutcome = (): Pending => ({ results: [], counts: { created: 0, updated: 0, skipped: 0, failed: 0 } });

/**
 * One batch request: every item validated as a single create validates it, the valid ones
 * applied in one transaction. With `dryRun` the transaction is rolled back after answering; with
 * `import` the valid items are staged into that atomic import instead of written.
 */
export async function batchEvents(ctx: ServiceContext, principal: Principal, request: BatchRequest) {
  const out = emptyOutcome();
  const valid = validItems(request, out);
  if (request.import !== undefined) {
    const session = await ownImport(ctx, principal, request.import);
    const quota = ctx.imports;
    const bytes = valid.reduce((sum, v) => sum + Buffer.byteLength(JSON.stringify(v.body)), 0);
    await ctx.store.db.transaction().execute(async (trx) => {
      const reserved = await imports.reserveSeq(trx, session.id, request.items.length, bytes);
      if (!reserved) throw beingCommitted(session.id);
      if (reserved.items > quota.maxItems) {
        throw quotaExceeded(
          `An import holds at most ${quota.maxItems} events; this batch would bring it to ${reserved.items}. Commit it and import the rest in another (server start --import-max-items, BIZCTL_IMPORT_MAX_ITEMS).`,
        );
      }
      if (reserved.bytes > quota.maxBytes) {
        throw quotaExceeded(
          `An import holds at most ${mebibytes(quota.maxBytes)} MiB of events; this batch would bring it to ${mebibytes(reserved.bytes)} MiB. Commit it and import the rest in another (server start --import-max-mb, BIZCTL_IMPORT_MAX_MB).`,
        );
      }
      await imports.stageItems(
        trx,
        session.id,
        valid.map((v) => ({ seq: reserved.first + v.index, ref: v.ref ?? null, body: JSON.stringify(v.body) })),
      );
    });
    for (const v of valid)
      record(out, { index: v.index, ...(v.ref !== undefined && { ref: v.ref }), status: "staged" });
    out.results.sort((a, b) => a.index - b.index);
    return { ...out.counts, staged: valid.length, dryRun: false, results: out.results };
  }
  const now = ctx.clock().toISOString();
  try {
    await ctx.store.db.transaction().execute(async (trx) => {
      await apply(trx, principal, now, valid, request.onConflict ?? "fail", out);
      if (request.dryRun) throw new Rollback();
      // one record per request, with its counts: a row each would make the trail the size of the data
      await auditBy(ctx, trx, principal, {
        action: "event.batch",
        target: { type: "Event" },
        details: { ...out.counts, onConflict: request.onConflict ?? "fail" },
      });
    });
  } catch (error) {
    if (!(error instanceof Rollback)) throw error;
  }
  if (!request.dryRun && out.counts.created > 0) await repo.refreshStaleStatistics(ctx.store.db, ctx.store.dialect);
  out.results.sort((a, b) => a.index - b.index);
  return { ...out.counts, dryRun: Boolean(request.dryRun), results: out.results };
}

const mebibytes = (bytes: number) => Math.ceil(bytes / 1024 / 1024);

const quotaExceeded = (detail: string) => new ProblemError("quota_exceeded", detail);

const beingCommitted = (id: string) =>
  new ProblemError("conflict", `The import ${id} is being committed: it takes no more events, and no second commit.`);

async function ownImport(ctx: ServiceContext, principal: Principal, id: string) {
  const session = await imports.findImport(ctx.store.db, id);
  // someone else's import is as absent as a missing one: its id tells nothing
  if (!session || session.created_by !== principal.userId) {
    throw new ProblemError("not_found", `No import ${id} in progress; it was committed, aborted or expired.`);
  }
  return session;
}

/** Staged items, hidden rows and reveal work are done this many at a time: a short transaction each. */
const CHUNK = EVENT_BATCH_MAX;

/**
 * Lets the event loop serve what waits (a request, a create's group commit) between two chunks.
 * better-sqlite3 answers synchronously: without this, a commit's chunks follow one another as
 * promise callbacks and the process takes no request until the last one.
 */
const otherRequestsTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A commit not finished after this long is taken for dead (its process stopped) and given up. */
const COMMIT_GIVEN_UP_MS = 3600_000;

/**
 * Removes an import and everything it wrote, a chunk per transaction: its hidden rows (a commit
 * that failed, or died), its staged items, then the import itself.
 */
async function discardImport(ctx: ServiceContext, id: string): Promise<void> {
  const db = ctx.store.db;
  while ((await repo.deleteImportRows(db, id, CHUNK)) > 0);
  while ((await imports.deleteStagedItems(db, id, CHUNK)) > 0);
  await imports.deleteImport(db, id);
}

export async function startImport(ctx: ServiceContext, principal: Principal, onConflict: OnConflict = "fail") {
  const now = ctx.clock();
  const expiry = EVENT_IMPORT_TTL_HOURS * 3600_000;
  // imports left open (a killed client) or stuck in their commit go with what they wrote
  const abandoned = await imports.abandonedImports(
    ctx.store.db,
    new Date(now.getTime() - expiry).toISOString(),
    new Date(now.getTime() - COMMIT_GIVEN_UP_MS).toISOString(),
  );
  for (const id of abandoned) await discardImport(ctx, id);
  const open = await imports.countOpenImports(
    ctx.store.db,
    principal.userId,
    new Date(now.getTime() - expiry).toISOString(),
  );
  if (open >= ctx.imports.maxOpen) {
    throw quotaExceeded(
      `You have ${open} imports open, the most one user may (server start --import-max-open, BIZCTL_IMPORT_MAX_OPEN): commit or abort one first, or wait for it to expire.`,
    );
  }
  const id = crypto.randomUUID();
  await imports.createImport(ctx.store.db, {
    id,
    created_by: principal.userId,
    on_conflict: onConflict,
    created_at: now.toISOString(),
    next_seq: 0,
    commit_started_at: null,
  });
  return { id, expiresAt: new Date(now.getTime() + expiry).toISOString() };
}

/**
 * Writes every staged item of an import, in the order staged, under the import's conflict
 * policy, all or nothing, without holding other writers back: the events are written hidden, a
 * chunk per transaction (others write between two chunks), then shown in one short transaction
 * that clears their mark, applies the updates of existing events and writes the audit record.
 * Any failure removes what was written and the answer lists the failures; so does `dryRun`,
 * after checking everything. The import is gone afterwards either way.
 */
export async function commitImport(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  dryRun = false,
): Promise<CommitAnswer> {
  const session = await ownImport(ctx, principal, id);
  const onConflict = session.on_conflict as OnConflict;
  const db = ctx.store.db;
  const now = ctx.clock().toISOString();
  if (!(await imports.claimForCommit(db, id, now))) throw beingCommitted(id);
  const place: ImportPlacement = { importId: id, deferred: new Map() };
  const total = emptyOutcome();
  const failures: Result[] = [];
  let committed = false;
  try {
    for (let after = -1; ; ) {
      const staged = await imports.stagedItems(db, id, after, CHUNK);
      if (staged.length === 0) break;
      after = staged.at(-1)!.seq;
      const page = emptyOutcome();
      const items = staged.map((s) => ({
        index: s.seq,
        ...(s.ref !== null && { ref: s.ref }),
        body: JSON.parse(s.body) as EventBody,
      }));
      await db.transaction().execute((trx) => apply(trx, principal, now, items, onConflict, page, place));
      await otherRequestsTurn();
      for (const key of ["created", "updated", "skipped", "failed"] as const) total.counts[key] += page.counts[key];
      failures.push(...page.results.filter((r) => r.status === "failed"));
    }
    if (failures.length === 0 && !dryRun) {
      while ((await imports.deleteStagedItems(db, id, CHUNK)) > 0);
      await db.transaction().execute(async (trx) => {
        const revealed = await repo.revealImportRows(trx, ctx.store.dialect, id);
        await repo.refreshStatisticsAfterReveal(trx, ctx.store.dialect, revealed);
        for (const update of place.deferred.values()) {
          // deleted meanwhile by another writer: the import's version of it stands
          if (!(await repo.overwriteEvent(trx, update.row, update.bump))) {
            await repo.insertEventsIfAbsent(trx, [{ ...update.row, version: update.bump }]);
          }
        }
        await auditBy(ctx, trx, principal, {
          action: "event.import",
          target: { type: "Event" },
          details: { ...total.counts, onConflict, atomic: true },
        });
        await imports.deleteImport(trx, id);
      });
      committed = true;
    }
  } finally {
    if (!committed) await discardImport(ctx, id);
  }
  failures.sort((a, b) => a.index - b.index);
  return { ...total.counts, committed, dryRun, failures };
}

export async function abortImport(ctx: ServiceContext, principal: Principal, id: string): Promise<void> {
  const session = await ownImport(ctx, principal, id);
  if (session.state !== "open") throw beingCommitted(id);
  await discardImport(ctx, id);
}
