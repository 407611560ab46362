import type { ControlledTransaction } from "kysely";
import { savepointed } from "../store/savepoints.js";
import type { Schema } from "../store/schema.js";
import type { ServiceContext } from "./service-context.js";

/** Operations per shared commit: the longest a run holds SQLite's one writer is about this many rows. */
export const SHARED_COMMIT_LENGTH = 100;

/**
 * Consecutive creates of one bulk request share a transaction, so that an import of users pays a
 * commit per hundred rows rather than per row (a commit rewrites every page the row touched, in
 * the table, its indexes and the audit trail, and on PostgreSQL waits for the WAL flush). The
 * creates are written together (createResources, in a savepoint), or one at a time, each in a
 * savepoint: a create that fails undoes its own writes only, and every operation keeps its own
 * outcome, as if it had run alone. Consecutive PATCHes share one likewise (bulk-updates.ts).
 * Any other operation, or one that sets a password (its hashing would hold the transaction
 * open), commits the run first and runs on its own.
 */
export class SharedCommits {
  private open?: { trx: ControlledTransaction<Schema>; ctx: ServiceContext; length: number };

  constructor(private readonly ctx: ServiceContext) {}

  /** The context the next operation (or `count` creates written together) runs in: the shared transaction's when `shared`. */
  async contextFor(shared: boolean, count = 1): Promise<ServiceContext> {
    if (!shared || (this.open && this.open.length + count > SHARED_COMMIT_LENGTH)) await this.commit();
    if (!shared) return this.ctx;
    if (!this.open) {
      const trx = await this.ctx.store.db.startTransaction().execute();
      const db = savepointed(trx);
      this.open = { trx, ctx: { ...this.ctx, store: { ...this.ctx.store, db } }, length: 0 };
    }
    this.open.length += count;
    return this.open.ctx;
  }

  async commit(): Promise<void> {
    const open = this.open;
    this.open = undefined;
    if (open) await open.trx.commit().execute();
  }

  /** Undoes a run left open by an unexpected failure (the request then fails as a whole). */
  async abandon(): Promise<void> {
    const open = this.open;
    this.open = undefined;
    if (open) await open.trx.rollback().execute();
  }
}
