import { lockResources } from "../store/resources-repo.js";
import { lockAdminChanges } from "../store/users-repo.js";
import type { BulkOperation, BulkResult } from "./bulk-operation.js";
import { parsePath } from "./bulk-paths.js";
import type { ServiceContext } from "./service-context.js";
import type { SharedCommits } from "./shared-commits.js";

/** A run of updates (PATCH operations) of one bulk request, to be written in one shared commit. */
export interface UpdateRun<R> {
  /** the resources the run changes */
  ids: string[];
  /** an operation of the run may change a User's roles or its `active`: take away an admin */
  mayTakeAnAdmin: boolean;
  length: number;
  /** runs the run's operation `index` in `ctx`, exactly as its single request would; its result, failed or not */
  runOne(ctx: ServiceContext, index: number): Promise<R>;
  failed(result: R): boolean;
}

/**
 * An update written with the updates beside it (writeUpdatesTogether): a PATCH of one resource
 * that refers to no other operation and sets no password (hashing one would hold the shared
 * transaction open, as for a create).
 */
export function updatedTogether(operation: BulkOperation, refs: Set<string>): boolean {
  return (
    operation.method.toUpperCase() === "PATCH" &&
    /^\/(Resources|Users)\/[^/]+$/.test(operation.path) &&
    refs.size === 0 &&
    !/password/i.test(JSON.stringify(operation.data ?? null))
  );
}

/** Whether a PATCH may change a User's roles or `active`, and so take an admin away (read loosely: more is safe). */
function mayTakeAnAdmin(operation: BulkOperation): boolean {
  return /\b(active|roles)\b/i.test(JSON.stringify(operation.data ?? null));
}

/** The id a PATCH's path names, when it decodes (one that does not fails as its single request would). */
function idOf(operation: BulkOperation): string[] {
  try {
    const id = parsePath(operation.path).id;
    return id === undefined ? [] : [id];
  } catch {
    return [];
  }
}

/** The run of these operations, each run by `runOne`, failed when its status is 4xx or 5xx. */
export function updateRunOf(
  operations: BulkOperation[],
  runOne: (ctx: ServiceContext, operation: BulkOperation) => Promise<BulkResult>,
): UpdateRun<BulkResult> {
  return {
    ids: operations.flatMap(idOf),
    mayTakeAnAdmin: operations.some(mayTakeAnAdmin),
    length: operations.length,
    runOne: (ctx, index) => runOne(ctx, operations[index] as BulkOperation),
    failed: (result) => Number(result.status) >= 400,
  };
}

/**
 * PostgreSQL ends one of two transactions that wait on each other (a deadlock), or that a lock
 * timeout stops: nothing wrong with the writes, only with their order.
 */
function lostALockRace(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === "40P01" || code === "40001" || code === "55P03";
}

async function each<R>(ctx: ServiceContext, run: UpdateRun<R>, failuresAllowed: number): Promise<R[]> {
  const results: R[] = [];
  let failures = 0;
  for (let i = 0; i < run.length; i++) {
    const result = await run.runOne(ctx, i);
    results.push(result);
    if (run.failed(result) && ++failures >= failuresAllowed) break;
  }
  return results;
}

/**
 * Updates written as creates are (shared-commits.ts): one transaction for the run, each update
 * in it with its own reads, checks, savepoint, audit records and outcome, so that the run pays
 * one commit rather than one an update. What a run holds it holds until its commit: on
 * PostgreSQL it locks its rows first, in id order (and first of all the admin changes' lock,
 * which a single change takes before its row, when one of its updates may take an admin away),
 * so that two runs, or a run and a single change, never wait on each other in a cycle. Should
 * PostgreSQL still end the run's transaction for a lock, the run is undone and each update run
 * alone. With failOnErrors (`failuresAllowed` left of it), the run stops at that many failures:
 * the results are those of the operations run.
 */
export async function writeUpdatesTogether<R>(
  commits: SharedCommits,
  run: UpdateRun<R>,
  failuresAllowed: number,
): Promise<R[]> {
  // a transaction of the run's own: what a lost lock undoes is this run, no more
  await commits.commit();
  const ctx = await commits.contextFor(true, run.length);
  try {
    if (ctx.store.dialect === "postgres") {
      if (run.mayTakeAnAdmin) await lockAdminChanges(ctx.store.db, "postgres");
      await lockResources(ctx.store.db, [...new Set(run.ids)]);
    }
    const results = await each(ctx, run, failuresAllowed);
    await commits.commit();
    return results;
  } catch (error) {
    if (!lostALockRace(error)) throw error;
    await commits.abandon();
    return each(await commits.contextFor(false), run, failuresAllowed);
  }
}
