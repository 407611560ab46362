import type { Kysely } from "kysely";
import type { Schema } from "./schema.js";

export async function saveResetToken(
  db: Kysely<Schema>,
  row: {
    tokenHash: string;
    userId: string;
    createdAt: Date;
    expiresAt: Date;
    purpose?: "invitation";
    /** the role it was sent under by someone else; absent when the user asked for it */
    issuerRole?: string;
    accountStamp: string;
    /** the queued message that will carry the link (its token is made when it is sent) */
    mailId?: string;
  },
): Promise<void> {
  await db
    .insertInto("password_resets")
    .values({
      token_hash: row.tokenHash,
      user_id: row.userId,
      created_at: row.createdAt.toISOString(),
      expires_at: row.expiresAt.toISOString(),
      used_at: null,
      purpose: row.purpose ?? null,
      issuer_role: row.issuerRole ?? null,
      account_stamp: row.accountStamp,
      mail_id: row.mailId ?? null,
    })
    .execute();
}

/** Marks the token used if it is unused and unexpired; returns its user, or undefined. */
export async function consumeResetToken(db: Kysely<Schema>, tokenHash: string, now: Date): Promise<string | undefined> {
  const row = await db
    .selectFrom("password_resets")
    .select(["user_id", "expires_at", "used_at"])
    .where("token_hash", "=", tokenHash)
    .executeTakeFirst();
  if (!row || row.used_at || Date.parse(row.expires_at) <= now.getTime()) return undefined;
  const result = await db
    .updateTable("password_resets")
    .set({ used_at: now.toISOString() })
    .where("token_hash", "=", tokenHash)
    .where("used_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1 ? row.user_id : undefined;
}

/** A new invitation voids the older ones: only the latest link works. */
export async function voidInvitations(db: Kysely<Schema>, userId: string, now: Date): Promise<void> {
  await db
    .updateTable("password_resets")
    .set({ used_at: now.toISOString() })
    .where("user_id", "=", userId)
    .where("purpose", "=", "invitation")
    .where("used_at", "is", null)
    .execute();
}

/**
 * Binds the link of a queued message to a fresh token as the message is sent: the unused,
 * unexpired link row of `mailId` takes `tokenHash` (and, given, a new expiry). Undefined when the
 * link was used, voided or expired meanwhile: the message is then not worth sending.
 */
export async function bindLinkToken(
  db: Kysely<Schema>,
  change: { mailId: string; tokenHash: string; now: Date; expiresAt?: Date },
) {
  return db
    .updateTable("password_resets")
    .set({
      token_hash: change.tokenHash,
      ...(change.expiresAt && { expires_at: change.expiresAt.toISOString() }),
    })
    .where("mail_id", "=", change.mailId)
    .where("used_at", "is", null)
    .where("expires_at", ">", change.now.toISOString())
    .returning(["user_id", "purpose", "expires_at", "issuer_role", "account_stamp"])
    .executeTakeFirst();
}

/** Voids every unused reset and invitation link of a user (a new password, a disable, a change of roles). */
export async function voidPendingLinks(db: Kysely<Schema>, userId: string, now: Date): Promise<void> {
  await db
    .updateTable("password_resets")
    .set({ used_at: now.toISOString() })
    .where("user_id", "=", userId)
    .where("used_at", "is", null)
    .execute();
}

export async function userIdsByEmail(db: Kysely<Schema>, email: string): Promise<string[]> {
  const rows = await db
    .selectFrom("resource_values as v")
    .innerJoin("resources as r", "r.id", "v.resource_id")
    .select("r.id")
    .distinct()
    .where("v.path", "=", "emails.value")
    .where("v.text_value", "=", email.toLowerCase())
    .where("r.resource_type", "=", "User")
    .execute();
  return rows.map((r) => r.id);
}

/** The latest invitation of a user still unused (pending, or expired unused); undefined when none. */
export async function latestUnusedInvitation(db: Kysely<Schema>, userId: string) {
  return db
    .selectFrom("password_resets")
    .select(["created_at", "expires_at"])
    .where("user_id", "=", userId)
    .where("purpose", "=", "invitation")
    .where("used_at", "is", null)
    .orderBy("created_at", "desc")
    .limit(1)
    .executeTakeFirst();
}
