import type { Kysely } from "kysely";
import type { Schema } from "./schema.js";

/** The failed-proof state of a credentials row, as stored. */
export interface StoredFailures {
  failedLogins: number;
  lastFailedAt: string | null;
  lockedUntil: string | null;
}

const COLUMNS = ["failed_logins", "last_failed_login_at", "locked_until"] as const;

const stored = (row: { failed_logins: number; last_failed_login_at: string | null; locked_until: string | null }) => ({
  failedLogins: row.failed_logins,
  lastFailedAt: row.last_failed_login_at,
  lockedUntil: row.locked_until,
});

export async function readFailures(db: Kysely<Schema>, userId: string): Promise<StoredFailures | undefined> {
  const row = await db.selectFrom("credentials").select(COLUMNS).where("user_id", "=", userId).executeTakeFirst();
  return row && stored(row);
}

/**
 * Writes `to` if the user's failures are still `from` (a compare-and-set, one statement on either
 * database): whether they were. A caller that decided from `from` knows its decision held.
 */
export async function replaceFailures(
  db: Kysely<Schema>,
  userId: string,
  from: Pick<StoredFailures, "failedLogins" | "lastFailedAt">,
  to: StoredFailures,
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable("credentials")
    .set({
      failed_logins: to.failedLogins,
      last_failed_login_at: to.lastFailedAt,
      locked_until: to.lockedUntil,
      updated_at: now.toISOString(),
    })
    .where("user_id", "=", userId)
    .where("failed_logins", "=", from.failedLogins)
    .where((eb) =>
      from.lastFailedAt === null
        ? eb("last_failed_login_at", "is", null)
        : eb("last_failed_login_at", "=", from.lastFailedAt),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** One failure fewer (not below none), whatever else was counted; the state it leaves. */
export async function dropOneFailure(
  db: Kysely<Schema>,
  userId: string,
  now: Date,
): Promise<StoredFailures | undefined> {
  const row = await db
    .updateTable("credentials")
    .set((eb) => ({
      failed_logins: eb
        .case()
        .when("failed_logins", ">", 0)
        .then(eb("failed_logins", "-", 1))
        .else(0)
        .end(),
      updated_at: now.toISOString(),
    }))
    .where("user_id", "=", userId)
    .returning(COLUMNS)
    .executeTakeFirst();
  return row && stored(row);
}
