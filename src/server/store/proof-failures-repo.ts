import type { Kysely } from "kysely";
import type { Schema } from "./schema.js";

/** The failed-proof state of a credentials row, as stored. */
export interface StoredFailures {
  failedLogins: number;
  lastFailedAt: string | null;
  lockedUntil: string | null;
}

/**
 * The failed-proof state of a user, read under the row's write lock, so that the caller's change
 * (in the same transaction `trx`) follows the latest one on every instance: the no-op update
 * takes the lock on PostgreSQL (SQLite's transactions hold the database's from their start), and
 * the select that follows sees whatever the transaction it waited for committed.
 */
export async function lockFailures(trx: Kysely<Schema>, userId: string): Promise<StoredFailures | undefined> {
  await trx
    .updateTable("credentials")
    .set((eb) => ({ failed_logins: eb.ref("failed_logins") }))
    .where("user_id", "=", userId)
    .execute();
  const row = await trx
    .selectFrom("credentials")
    .select(["failed_logins", "last_failed_login_at", "locked_until"])
    .where("user_id", "=", userId)
    .executeTakeFirst();
  return (
    row && { failedLogins: row.failed_logins, lastFailedAt: row.last_failed_login_at, lockedUntil: row.locked_until }
  );
}

/** Writes the failed-proof state of a user (under the lock lockFailures took in `trx`). */
export async function writeFailures(
  trx: Kysely<Schema>,
  userId: string,
  state: StoredFailures,
  now: Date,
): Promise<void> {
  await trx
    .updateTable("credentials")
    .set({
      failed_logins: state.failedLogins,
      last_failed_login_at: state.lastFailedAt,
      locked_until: state.lockedUntil,
      updated_at: now.toISOString(),
    })
    .where("user_id", "=", userId)
    .execute();
}

/**
 * Clears a user's failures after a success, unless a proof was counted since `seen` (the state its
 * own proof left): those failures, and the proofs still being checked, stay counted.
 */
export async function clearFailuresUnlessCounted(
  db: Kysely<Schema>,
  userId: string,
  seen: Pick<StoredFailures, "failedLogins" | "lastFailedAt">,
  now: Date,
): Promise<void> {
  await db
    .updateTable("credentials")
    .set({ failed_logins: 0, locked_until: null, updated_at: now.toISOString() })
    .where("user_id", "=", userId)
    .where("failed_logins", "=", seen.failedLogins)
    .where((eb) =>
      seen.lastFailedAt === null
        ? eb("last_failed_login_at", "is", null)
        : eb("last_failed_login_at", "=", seen.lastFailedAt),
    )
    .execute();
}
