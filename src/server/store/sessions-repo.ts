import type { Kysely } from "kysely";
import { sql } from "kysely";
import { precompiled } from "./precompiled.js";
import type { Schema } from "./schema.js";
import { mfaEnabledOf } from "./totp-repo.js";
import { CALLER_COLUMNS } from "./users-repo.js";

export async function createSession(
  db: Kysely<Schema>,
  session: { id: string; userId: string; createdAt: Date; expiresAt: Date; clientIp?: string; userAgent?: string },
): Promise<void> {
  await db
    .insertInto("sessions")
    .values({
      id: session.id,
      user_id: session.userId,
      created_at: session.createdAt.toISOString(),
      expires_at: session.expiresAt.toISOString(),
      revoked_at: null,
      client_ip: session.clientIp ?? null,
      user_agent: session.userAgent ?? null,
      last_used_at: session.createdAt.toISOString(),
    })
    .execute();
}

const liveSessionQuery = precompiled(
  (db, id) =>
    db
      .selectFrom("sessions")
      .innerJoin("resources", "resources.id", "sessions.user_id")
      .leftJoin("credentials", "credentials.user_id", "sessions.user_id")
      .select(["sessions.revoked_at", "sessions.last_used_at", ...CALLER_COLUMNS])
      // the primary key's index answers it: what --require-mfa needs, in the same read
      .select(mfaEnabledOf(sql.ref("sessions.user_id")).as("mfa_enabled"))
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

/** Ends one open session of a user; false when the user has no such open session. */
export async function revokeSessionOf(db: Kysely<Schema>, userId: string, id: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable("sessions")
    .set({ revoked_at: now.toISOString() })
    .where("id", "=", id)
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", now.toISOString())
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

const touchQuery = precompiled(
  (db, id, at) => db.updateTable("sessions").set({ last_used_at: at }).where("id", "=", id),
  2,
);

/** Records that a session was used; the caller decides how often (not on every request). */
export async function touchSession(db: Kysely<Schema>, id: string, at: Date): Promise<void> {
  await touchQuery(db, id, at.toISOString());
}

/** The open sessions of a user, newest first. */
export async function listOpenSessions(db: Kysely<Schema>, userId: string, now: Date) {
  return db
    .selectFrom("sessions")
    .select(["id", "created_at", "last_used_at", "expires_at", "client_ip", "user_agent"])
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", now.toISOString())
    .orderBy("created_at", "desc")
    .orderBy("id")
    .execute();
}

export async function revokeUserSessions(
  db: Kysely<Schema>,
  userId: string,
  now: Date,
  keepSessionId?: string,
): Promise<number> {
  let query = db
    .updateTable("sessions")
    .set({ revoked_at: now.toISOString() })
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    // an expired session's token is refused anyway; leaving it keeps the count of what was ended true
    .where("expires_at", ">", now.toISOString());
  if (keepSessionId) query = query.where("id", "!=", keepSessionId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * A user's open login sessions, newest first (a grant's session, which backs OAuth token
 * credentials, is not a login and is not counted): what the session cap counts.
 */
export async function openLoginSessions(db: Kysely<Schema>, userId: string, now: Date) {
  return db
    .selectFrom("sessions as s")
    .select(["s.id", "s.created_at"])
    .where("s.user_id", "=", userId)
    .where("s.revoked_at", "is", null)
    .where("s.expires_at", ">", now.toISOString())
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom("oauth_tokens as t").select("t.token").whereRef("t.session_id", "=", "s.id"))),
    )
    .orderBy("s.created_at", "desc")
    .orderBy("s.id", "desc")
    .execute();
}

/** Ends the sessions of these ids; returns how many. */
export async function endSessions(db: Kysely<Schema>, ids: readonly string[], now: Date): Promise<number> {
  if (ids.length === 0) return 0;
  await db.updateTable("sessions").set({ revoked_at: now.toISOString() }).where("id", "in", ids).execute();
  return ids.length;
}

export async function pruneSessions(db: Kysely<Schema>, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - 24 * 3600 * 1000).toISOString();
  await db.deleteFrom("sessions").where("expires_at", "<", cutoff).execute();
}

/** The sessions not ended nor expired, logins and the applications' grants alike (metrics). */
export async function countOpenSessions(db: Kysely<Schema>, nowIso: string): Promise<number> {
  const row = await db
    .selectFrom("sessions")
    .select((eb) => eb.fn.countAll().as("open"))
    .where("revoked_at", "is", null)
    .where("expires_at", ">", nowIso)
    .executeTakeFirst();
  return Number(row?.open ?? 0);
}
