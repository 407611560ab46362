import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Schema, TotpFactorsTable } from "./schema.js";

export type TotpFactorRow = TotpFactorsTable;

/**
 * 1 when the user of `userId` (a column of the query it goes in) has an active factor, else 0:
 * the `mfaEnabled` of the account state, and what `--require-mfa` reads with each session.
 */
export const mfaEnabledOf = (userId: RawBuilder<unknown>) =>
  sql<number>`case when exists (select 1 from totp_factors f where f.user_id = ${userId} and f.enabled_at is not null) then 1 else 0 end`;

export async function findTotpFactor(db: Kysely<Schema>, userId: string): Promise<TotpFactorRow | undefined> {
  return db.selectFrom("totp_factors").selectAll().where("user_id", "=", userId).executeTakeFirst();
}

/**
 * Starts (or restarts) a pending enrollment with a new sealed seed. An active factor is left as it
 * is: the answer is false, and the caller refuses.
 */
export async function savePendingTotpFactor(
  db: Kysely<Schema>,
  row: { userId: string; sealedSecret: string; createdAt: Date },
): Promise<boolean> {
  const values = {
    user_id: row.userId,
    sealed_secret: row.sealedSecret,
    created_at: row.createdAt.toISOString(),
    enabled_at: null,
    last_step: null,
  };
  const result = await db
    .insertInto("totp_factors")
    .values(values)
    .onConflict((oc) =>
      oc
        .column("user_id")
        .doUpdateSet({ sealed_secret: values.sealed_secret, created_at: values.created_at, last_step: null })
        .where("totp_factors.enabled_at", "is", null),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/**
 * Records `step` as the last one accepted, if it is later than the last (so two requests racing
 * with one code cannot both pass); with `enable`, a pending factor becomes active. True when it did.
 */
export async function acceptTotpStep(
  db: Kysely<Schema>,
  userId: string,
  step: number,
  enable?: { at: Date },
): Promise<boolean> {
  let update = db
    .updateTable("totp_factors")
    .set({ last_step: step, ...(enable && { enabled_at: enable.at.toISOString() }) })
    .where("user_id", "=", userId)
    .where((eb) => eb.or([eb("last_step", "is", null), eb("last_step", "<", step)]));
  if (enable) update = update.where("enabled_at", "is", null);
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Removes the factor and its recovery codes; the number of factors removed (0 or 1). */
export async function deleteTotpFactor(db: Kysely<Schema>, userId: string): Promise<number> {
  await db.deleteFrom("totp_recovery_codes").where("user_id", "=", userId).execute();
  const result = await db.deleteFrom("totp_factors").where("user_id", "=", userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function insertRecoveryCodes(
  db: Kysely<Schema>,
  userId: string,
  codeHashes: readonly string[],
  now: Date,
): Promise<void> {
  await db.deleteFrom("totp_recovery_codes").where("user_id", "=", userId).execute();
  await db
    .insertInto("totp_recovery_codes")
    .values(
      codeHashes.map((code_hash) => ({ code_hash, user_id: userId, created_at: now.toISOString(), used_at: null })),
    )
    .execute();
}

/** Marks an unused recovery code of this user used; true when this call did (single use under races). */
export async function consumeRecoveryCode(
  db: Kysely<Schema>,
  userId: string,
  codeHash: string,
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable("totp_recovery_codes")
    .set({ used_at: now.toISOString() })
    .where("code_hash", "=", codeHash)
    .where("user_id", "=", userId)
    .where("used_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function countUnusedRecoveryCodes(db: Kysely<Schema>, userId: string): Promise<number> {
  const row = await db
    .selectFrom("totp_recovery_codes")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("user_id", "=", userId)
    .where("used_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** How a user's recovery codes stand: how many are left, how many were spent and when the first was. */
export async function recoveryCodeUse(
  db: Kysely<Schema>,
  userId: string,
): Promise<{ left: number; used: number; firstUsedAt: string | null }> {
  const row = await db
    .selectFrom("totp_recovery_codes")
    .select((eb) => [
      eb.fn.countAll<number | string>().as("total"),
      eb.fn.count<number | string>("used_at").as("used"),
      eb.fn.min("used_at").as("first_used_at"),
    ])
    .where("user_id", "=", userId)
    .executeTakeFirstOrThrow();
  const used = Number(row.used);
  return { left: Number(row.total) - used, used, firstUsedAt: (row.first_used_at as string | null) ?? null };
}
