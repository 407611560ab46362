import { type Kysely, sql } from "kysely";
import { precompiled, precompiledWrite } from "./precompiled.js";
import type { ApiTokensTable, Schema } from "./schema.js";
import { mfaEnabledOf } from "./totp-repo.js";
import { ACCOUNT_COLUMNS } from "./users-repo.js";

export type NewApiToken = Omit<ApiTokensTable, "revoked_at" | "last_used_at" | "last_used_ip">;

export async function insertApiToken(db: Kysely<Schema>, token: NewApiToken): Promise<void> {
  await db
    .insertInto("api_tokens")
    .values({ ...token, revoked_at: null, last_used_at: null, last_used_ip: null })
    .execute();
}

const byHashQuery = precompiled(
  (db, hash) =>
    db
      .selectFrom("api_tokens")
      .innerJoin("resources", "resources.id", "api_tokens.user_id")
      .leftJoin("credentials", "credentials.user_id", "api_tokens.user_id")
      .select([
        "api_tokens.id as token_id",
        "api_tokens.name as token_name",
        "api_tokens.scopes",
        "api_tokens.expires_at",
        "api_tokens.revoked_at",
        "api_tokens.last_used_at",
        "api_tokens.last_used_ip",
        ...ACCOUNT_COLUMNS,
      ])
      // what --require-mfa needs of the owner, in the same read
      .select(mfaEnabledOf(sql.ref("api_tokens.user_id")).as("mfa_enabled"))
      .where("api_tokens.token_hash", "=", hash),
  1,
);

/** The token of a hash with its owner's current state, in one indexed read (on every request it makes). */
export async function findApiTokenByHash(db: Kysely<Schema>, hash: string) {
  return (await byHashQuery(db, hash))[0];
}

const touchQuery = precompiledWrite(
  (db, id, at, ip, staleBefore) =>
    db
      .updateTable("api_tokens")
      .set({ last_used_at: at, last_used_ip: ip })
      .where("id", "=", id)
      // conditional, for the other instances that share the database: one of them records a use
      .where((eb) =>
        eb.or([
          eb("last_used_at", "is", null),
          eb("last_used_at", "<", staleBefore),
          eb("last_used_ip", "is", null),
          eb("last_used_ip", "!=", ip),
        ]),
      ),
  4,
);

/** Records a use; false when another request recorded this one already (same address, within the minute). */
export async function touchApiToken(
  db: Kysely<Schema>,
  id: string,
  at: string,
  ip: string,
  staleBefore: string,
): Promise<boolean> {
  return (await touchQuery(db, id, at, ip, staleBefore)) > 0;
}

const LISTED = ["id", "name", "scopes", "created_at", "expires_at", "last_used_at", "last_used_ip"] as const;

/** A user's tokens that are not revoked, newest first. */
export async function listApiTokens(db: Kysely<Schema>, userId: string) {
  return db
    .selectFrom("api_tokens")
    .select([...LISTED])
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    .orderBy("created_at", "desc")
    .orderBy("id")
    .execute();
}

/** Revokes one token of a user; its name when it was live, undefined when there is no such token. */
export async function revokeApiToken(
  db: Kysely<Schema>,
  userId: string,
  id: string,
  now: Date,
): Promise<{ name: string } | undefined> {
  return db
    .updateTable("api_tokens")
    .set({ revoked_at: now.toISOString() })
    .where("id", "=", id)
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    .returning(["name"])
    .executeTakeFirst();
}

/** Revokes every live token of a user (a password change or reset, a disabling); how many. */
export async function revokeUserApiTokens(db: Kysely<Schema>, userId: string, now: Date): Promise<number> {
  const result = await db
    .updateTable("api_tokens")
    .set({ revoked_at: now.toISOString() })
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", now.toISOString())
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
