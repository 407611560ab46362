import type { Kysely } from "kysely";
import { precompiled } from "./precompiled.js";
import type { Schema } from "./schema.js";
import { ACCOUNT_COLUMNS } from "./users-repo.js";

export async function createSession(
  db: Kysely<Schema>,
  session: { id: string; userId: string; createdAt: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto("sessions")
    .values({
      id: session.id,
      user_id: session.userId,
      created_at: session.createdAt.toISOString(),
      expires_at: session.expiresAt.toISOString(),
      revoked_at: null,
    })
    .execute();
}

const liveSessionQuery = precompiled(
  (db, id) =>
    db
      .selectFrom("sessions")
      .innerJoin("resources", "resources.id", "sessions.user_id")
      .leftJoin("credentials", "credentials.user_id", "sessions.user_id")
      .select(["sessions.revoked_at", ...ACCOUNT_COLUMNS])
      .where("sessions.id", "=", id),
  1,
);

/** The session of a token with its user's current state, in one indexed read (on every request). */
export async function findLiveSession(db: Kysely<Schema>, id: string) {
  return (await liveSessionQuery(db, id))[0];
}

export async function revokeSession(db: Kysely<Schema>, id: string, now: Date): Promise<void> {
  await db
    .updateTable("sessions")
    .set({ revoked_at: now.toISOString() })
    .where("id", "=", id)
    .where("revoked_at", "is", null)
    .execute();
}

export async function revokeUserSessions(
  db: Kysely<Schema>,
  userId: string,
  now: Date,
  keepSessionId?: string,
): Promise<void> {
  let query = db
    .updateTable("sessions")
    .set({ revoked_at: now.toISOString() })
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null);
  if (keepSessionId) query = query.where("id", "!=", keepSessionId);
  await query.execute();
}

/** Expired sessions are kept a day for audit, then dropped; called opportunistically at login. */
export async function pruneSessions(db: Kysely<Schema>, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - 24 * 3600 * 1000).toISOString();
  await db.deleteFrom("sessions").where("expires_at", "<", cutoff).execute();
}
