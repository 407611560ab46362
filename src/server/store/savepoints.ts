import { type Kysely, sql, type Transaction } from "kysely";
import type { Schema } from "./schema.js";

/**
 * A handle on an open transaction whose `transaction().execute(work)` runs the work in a
 * savepoint of it: code written to commit on its own joins the open transaction instead, and a
 * failure undoes its own statements only (on PostgreSQL a failed statement would otherwise
 * abort everything after it).
 */
export function savepointed(trx: Transaction<Schema>): Kysely<Schema> {
  let opened = 0;
  const transaction = () => ({
    async execute<T>(work: (trx: Transaction<Schema>) => Promise<T>): Promise<T> {
      const name = sql.id(`bizctl_savepoint_${++opened}`);
      await sql`savepoint ${name}`.execute(trx);
      try {
        const result = await work(trx);
        await sql`release savepoint ${name}`.execute(trx);
        return result;
      } catch (error) {
        await sql`rollback to savepoint ${name}`.execute(trx);
        await sql`release savepoint ${name}`.execute(trx);
        throw error;
      }
    },
  });
  return new Proxy(trx, {
    get(target, key) {
      if (key === "transaction") return transaction;
      // kysely's classes keep private fields: their methods must run on the object itself
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as unknown as Kysely<Schema>;
}
