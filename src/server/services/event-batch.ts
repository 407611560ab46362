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
import { ProblemError } from "../problems.js";
import * as imports from "../store/event-imports-repo.js";
import type { EventRow } from "../store/events-repo.js";
import * as repo from "../store/events-repo.js";
import type { Schema } from "../store/schema.js";
import { type AjvIssue, fieldIssues } from "../validation-issues.js";
import { auditBy } from "./audit.js";
import type { Principal, ServiceContext } from "./context.js";
import { eventRow, newEventCode } from "./events.js";

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

/**
 * Applies valid items in order inside `db` (a transaction): what the store holds, and what came
 * earlier in the same batch, decide between created, updated, skipped and failed. Inserts go in
 * multi-row statements; a code another writer created meanwhile fails as a conflict.
 */
async function apply(
  db: Kysely<Schema>,
  principal: Principal,
  now: string,
  items: { index: number; ref?: number; body: EventBody }[],
  onConflict: OnConflict,
  out: Pending,
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
      rows.push({ index: item.index, ref: item.ref, row });
    } catch (error) {
      const problem = problemOf(error);
      if (!problem) throw error;
      record(out, { index: item.index, ref: item.ref, status: "failed", code: item.body.code, problem });
    }
  }
  const stored = await repo.findEvents(
    db,
    rows.map((r) => r.row.code_key),
  );
  const inserts = new Map<string, { row: EventRow; result: Result }>();
  const updates = new Map<string, EventRow>();
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
        detail: current
          ? `An event with code ${current.code} already exists.`
          : `The code ${row.code} came earlier in the same import.`,
      };
      record(out, { ...base, status: "failed", problem });
    } else if (earlier) {
      // updated twice in one batch: the insert takes the later fields
      earlier.row = { ...row, code: earlier.row.code };
      record(out, { ...base, code: earlier.row.code, status: "updated" });
    } else if (current) {
      const previous = updates.get(row.code_key);
      updates.set(row.code_key, {
        ...row,
        code: current.code,
        created_at: current.created_at,
        created_by: current.created_by,
        version: (previous ?? current).version + 1,
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
    // created by another writer since this batch read the store
    out.counts.created--;
    record(out, {
      ...insert.result,
      status: "failed",
      problem: { code: "conflict", detail: `An event with code ${insert.row.code} already exists.` },
    });
  }
  for (const row of updates.values()) await repo.overwriteEvent(db, row);
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
    await ctx.store.db.transaction().execute(async (trx) => {
      const first = await imports.reserveSeq(trx, session.id, request.items.length);
      await imports.stageItems(
        trx,
        session.id,
        valid.map((v) => ({ seq: first + v.index, ref: v.ref ?? null, body: JSON.stringify(v.body) })),
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
  out.results.sort((a, b) => a.index - b.index);
  return { ...out.counts, dryRun: Boolean(request.dryRun), results: out.results };
}

async function ownImport(ctx: ServiceContext, principal: Principal, id: string) {
  const session = await imports.findImport(ctx.store.db, id);
  // someone else's import is as absent as a missing one: its id tells nothing
  if (!session || session.created_by !== principal.userId) {
    throw new ProblemError("not_found", `No import ${id} in progress; it was committed, aborted or expired.`);
  }
  return session;
}

export async function startImport(ctx: ServiceContext, principal: Principal, onConflict: OnConflict = "fail") {
  const now = ctx.clock();
  const expiry = EVENT_IMPORT_TTL_HOURS * 3600_000;
  // an import left open (a killed client) goes with its staged rows once it has expired
  await imports.dropImportsBefore(ctx.store.db, new Date(now.getTime() - expiry).toISOString());
  const id = crypto.randomUUID();
  await imports.createImport(ctx.store.db, {
    id,
    created_by: principal.userId,
    on_conflict: onConflict,
    created_at: now.toISOString(),
    next_seq: 0,
  });
  return { id, expiresAt: new Date(now.getTime() + expiry).toISOString() };
}

/**
 * Writes every staged item of an import in one transaction, in the order staged, under the
 * import's conflict policy. Any failure rolls the whole of it back and the answer lists the
 * failures; so does `dryRun`, after checking everything. The import is gone afterwards either way.
 */
export async function commitImport(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  dryRun = false,
): Promise<CommitAnswer> {
  const session = await ownImport(ctx, principal, id);
  const onConflict = session.on_conflict as OnConflict;
  const now = ctx.clock().toISOString();
  let outcome = emptyOutcome();
  let committed = false;
  try {
    await ctx.store.db.transaction().execute(async (trx) => {
      const failures: Result[] = [];
      const total = emptyOutcome();
      for (let after = -1; ; ) {
        const staged = await imports.stagedItems(trx, id, after, EVENT_BATCH_MAX);
        if (staged.length === 0) break;
        after = staged.at(-1)!.seq;
        const page = emptyOutcome();
        const items = staged.map((s) => ({
          index: s.seq,
          ...(s.ref !== null && { ref: s.ref }),
          body: JSON.parse(s.body) as EventBody,
        }));
        await apply(trx, principal, now, items, onConflict, page);
        for (const key of ["created", "updated", "skipped", "failed"] as const) total.counts[key] += page.counts[key];
        failures.push(...page.results.filter((r) => r.status === "failed"));
      }
      outcome = { results: failures, counts: total.counts };
      await imports.dropImport(trx, id);
      if (failures.length > 0 || dryRun) throw new Rollback();
      await auditBy(ctx, trx, principal, {
        action: "event.import",
        target: { type: "Event" },
        details: { ...total.counts, onConflict, atomic: true },
      });
      committed = true;
    });
  } catch (error) {
    if (!(error instanceof Rollback)) throw error;
    await imports.dropImport(ctx.store.db, id);
  }
  outcome.results.sort((a, b) => a.index - b.index);
  return { ...outcome.counts, committed, dryRun, failures: outcome.results };
}

export async function abortImport(ctx: ServiceContext, principal: Principal, id: string): Promise<void> {
  await ownImport(ctx, principal, id);
  await imports.dropImport(ctx.store.db, id);
}
