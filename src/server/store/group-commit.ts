import type { Kysely } from "kysely";
import { observerOf } from "./observer.js";
import type { Schema } from "./schema.js";

interface Pending<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit: the writes asked for during one turn of the event loop run together in one
 * transaction, after it (setImmediate), and each caller awaits the result of its own write. A
 * commit costs far more than the row it writes (SQLite appends every changed page to its WAL,
 * PostgreSQL flushes its WAL): N concurrent requests pay one commit instead of N. Called inside a
 * transaction, a write joins that transaction at once. When the batch's transaction fails, each
 * write is run again alone, so that one failing row (a nonce whose consumer was deleted meanwhile,
 * an event code given twice) does not fail the others: every caller gets its own outcome, as if it
 * had written alone.
 *
 * `atomic`: each write is several statements that commit together (an event and its audit record),
 * so a write run alone runs in a transaction of its own too; otherwise (one statement) it runs bare.
 */
export function groupCommit<T, R>(
  write: (db: Kysely<Schema>, item: T) => Promise<R>,
  { atomic = false }: { atomic?: boolean } = {},
): (db: Kysely<Schema>, item: T) => Promise<R> {
  const queues = new WeakMap<Kysely<Schema>, Pending<T, R>[]>();
  const alone = (db: Kysely<Schema>, item: T) =>
    atomic ? db.transaction().execute((trx) => write(trx, item)) : write(db, item);

  async function flush(db: Kysely<Schema>): Promise<void> {
    const batch = queues.get(db)!;
    queues.delete(db);
    observerOf(db)?.groupCommit(batch.length);
    if (batch.length === 1) {
      const only = batch[0]!;
      return alone(db, only.item).then(only.resolve, only.reject);
    }
    let results: R[];
    try {
      results = await db.transaction().execute(async (trx) => {
        const out: R[] = [];
        for (const pending of batch) out.push(await write(trx, pending.item));
        return out;
      });
    } catch {
      for (const pending of batch) alone(db, pending.item).then(pending.resolve, pending.reject);
      return;
    }
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i]!);
  }

  return (db, item) => {
    if (db.isTransaction) return write(db, item);
    return new Promise<R>((resolve, reject) => {
      let queue = queues.get(db);
      if (!queue) {
        queue = [];
        queues.set(db, queue);
        setImmediate(flush, db);
      }
      queue.push({ item, resolve, reject });
    });
  };
}
