import { type Kysely, type Selectable, sql } from "kysely";
import { groupCommit } from "./group-commit.js";
import { precompiled, precompiledWrite } from "./precompiled.js";
import type { OAuthTemporaryCredentialsTable, OAuthTokensTable, Schema } from "./schema.js";
import { mfaEnabledOf } from "./totp-repo.js";
import { ACCOUNT_COLUMNS } from "./users-repo.js";

export type TemporaryRow = Selectable<OAuthTemporaryCredentialsTable>;
export type TokenRow = Selectable<OAuthTokensTable>;

export interface ConsumerRecord {
  id: string;
  consumerKey: string;
  name?: string;
  callbackUrls: string[];
  secret: string;
  /** PEM RSA public key: the consumer signs with RSA-SHA1, never with its secret */
  publicKey?: string;
}

/**
 * The OAuthConsumer resource with this key, and its secret. The indexed value table keeps
 * strings lower-cased, so the exact (case-sensitive) key is checked on the attributes.
 */
const consumerQuery = precompiled(
  (db, keyLowerCase) =>
    db
      .selectFrom("resource_values as v")
      .innerJoin("resources as r", "r.id", "v.resource_id")
      .innerJoin("resource_secrets as s", "s.resource_id", "r.id")
      .select(["r.id", "r.attributes", "s.secret"])
      .where("v.path", "=", "consumerkey")
      .where("v.text_value", "=", keyLowerCase)
      .where("r.resource_type", "=", "OAuthConsumer"),
  1,
);

/** The consumer of these columns when its key is exactly `consumerKey`, else undefined. */
export function toConsumer(
  row: { id: string; attributes: string; secret: string },
  consumerKey: string,
): ConsumerRecord | undefined {
  const attributes = JSON.parse(row.attributes) as {
    consumerKey?: unknown;
    name?: unknown;
    callbackUrls?: unknown;
    publicKey?: unknown;
  };
  if (attributes.consumerKey !== consumerKey) return undefined;
  return {
    id: row.id,
    consumerKey,
    ...(typeof attributes.name === "string" && { name: attributes.name }),
    callbackUrls: Array.isArray(attributes.callbackUrls)
      ? attributes.callbackUrls.filter((u): u is string => typeof u === "string")
      : [],
    secret: row.secret,
    ...(typeof attributes.publicKey === "string" && { publicKey: attributes.publicKey }),
  };
}

export async function findConsumerByKey(db: Kysely<Schema>, consumerKey: string): Promise<ConsumerRecord | undefined> {
  const rows = await consumerQuery(db, consumerKey.toLowerCase());
  for (const row of rows) {
    const consumer = toConsumer(row, consumerKey);
    if (consumer) return consumer;
  }
  return undefined;
}

const nonceInsert = precompiledWrite(
  (db, ts, consumer_id, token, nonce) =>
    db
      .insertInto("oauth_nonces")
      .values({ ts, consumer_id, token, nonce })
      .onConflict((oc) => oc.doNothing()),
  4,
);

export interface NonceRow {
  /** oauth_timestamp as its decimal text */
  ts: string;
  consumer_id: string;
  token: string;
  nonce: string;
}

/**
 * Records a (consumer, token, nonce, timestamp); false when it was already there. The primary
 * key decides, on every instance alike; concurrent requests share one commit (group-commit.ts),
 * and within a transaction the row joins it.
 */
export const recordNonce = groupCommit(
  async (db: Kysely<Schema>, row: NonceRow): Promise<boolean> =>
    (await nonceInsert(db, row.ts, row.consumer_id, row.token, row.nonce)) === 1,
);

/**
 * Drops nonces whose timestamps are older than `oldestAcceptedTs` (seconds: they can no longer
 * be accepted, a range of the nonces' key), and temporary credentials past use.
 */
export async function pruneOAuth(db: Kysely<Schema>, oldestAcceptedTs: number, nowIso: string): Promise<void> {
  await db.deleteFrom("oauth_nonces").where("ts", "<", oldestAcceptedTs).execute();
  await db.deleteFrom("oauth_temporary_credentials").where("expires_at", "<", nowIso).execute();
}

export async function insertTemporary(db: Kysely<Schema>, row: TemporaryRow): Promise<void> {
  await db.insertInto("oauth_temporary_credentials").values(row).execute();
}

export async function findTemporary(db: Kysely<Schema>, token: string): Promise<TemporaryRow | undefined> {
  return db.selectFrom("oauth_temporary_credentials").selectAll().where("token", "=", token).executeTakeFirst();
}

/** The owner's approval: once, before expiry. False when it was not (or no longer) possible. */
export async function approveTemporary(
  db: Kysely<Schema>,
  token: string,
  change: { userId: string; verifierHash: string; nowIso: string },
): Promise<boolean> {
  const result = await db
    .updateTable("oauth_temporary_credentials")
    .set({ user_id: change.userId, verifier_hash: change.verifierHash, authorized_at: change.nowIso })
    .where("token", "=", token)
    .where("authorized_at", "is", null)
    .where("used_at", "is", null)
    .where("expires_at", ">", change.nowIso)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The exchange: once, with the right verifier, by the consumer it was issued to, before expiry. */
export async function useTemporary(
  db: Kysely<Schema>,
  token: string,
  check: { consumerId: string; verifierHash: string; nowIso: string },
): Promise<boolean> {
  const result = await db
    .updateTable("oauth_temporary_credentials")
    .set({ used_at: check.nowIso })
    .where("token", "=", token)
    .where("consumer_id", "=", check.consumerId)
    .where("verifier_hash", "=", check.verifierHash)
    .where("used_at", "is", null)
    .where("expires_at", ">", check.nowIso)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function insertToken(db: Kysely<Schema>, row: TokenRow): Promise<void> {
  await db.insertInto("oauth_tokens").values(row).execute();
}

/**
 * Token credentials with their session, their user's current state and their consumer, in one
 * indexed read: what a signed request needs, read afresh on every request (as a Bearer token's
 * session is), so that a revocation anywhere is seen at once.
 */
const tokenQuery = precompiled(
  (db, token) =>
    db
      .selectFrom("oauth_tokens as t")
      .innerJoin("sessions as s", "s.id", "t.session_id")
      .innerJoin("resources", "resources.id", "t.user_id")
      .leftJoin("credentials", "credentials.user_id", "t.user_id")
      .innerJoin("resources as c", "c.id", "t.consumer_id")
      .innerJoin("resource_secrets as cs", "cs.resource_id", "t.consumer_id")
      .select([
        "t.token",
        "t.secret",
        "t.consumer_id",
        "t.session_id",
        "s.expires_at",
        "s.revoked_at",
        "c.attributes as consumer_attributes",
        "cs.secret as consumer_secret",
        ...ACCOUNT_COLUMNS,
      ])
      // what --require-mfa needs of the owner, in the same read
      .select(mfaEnabledOf(sql.ref("t.user_id")).as("mfa_enabled"))
      .where("t.token", "=", token),
  1,
);

export async function findToken(db: Kysely<Schema>, token: string) {
  return (await tokenQuery(db, token))[0];
}

/** The consumer a token row was issued to, when its key is exactly `consumerKey`. */
export function consumerOfToken(
  row: { consumer_id: string; consumer_attributes: string; consumer_secret: string },
  consumerKey: string,
): ConsumerRecord | undefined {
  return toConsumer(
    { id: row.consumer_id, attributes: row.consumer_attributes, secret: row.consumer_secret },
    consumerKey,
  );
}

/** Live token credentials (not revoked, not expired), newest first. */
export async function listTokens(db: Kysely<Schema>, options: { userId?: string; nowIso: string }) {
  let query = db
    .selectFrom("oauth_tokens as t")
    .innerJoin("sessions as s", "s.id", "t.session_id")
    .innerJoin("resources as u", "u.id", "t.user_id")
    .innerJoin("resources as c", "c.id", "t.consumer_id")
    .select([
      "t.token",
      "t.user_id",
      "t.consumer_id",
      "t.created_at",
      "t.last_used_at",
      "s.expires_at",
      "u.attributes as user_attributes",
      "c.attributes as consumer_attributes",
    ])
    .where("s.revoked_at", "is", null)
    .where("s.expires_at", ">", options.nowIso);
  if (options.userId !== undefined) query = query.where("t.user_id", "=", options.userId);
  return query.orderBy("t.created_at", "desc").orderBy("t.token").execute();
}

/**
 * Revokes token credentials by dropping their session (the token row goes with it); with
 * `userId`, only when they are that user's.
 */
export async function deleteToken(
  db: Kysely<Schema>,
  token: string,
  userId?: string,
): Promise<{ userId: string; consumerId: string } | undefined> {
  let query = db.selectFrom("oauth_tokens").select(["session_id", "user_id", "consumer_id"]).where("token", "=", token);
  if (userId !== undefined) query = query.where("user_id", "=", userId);
  const row = await query.executeTakeFirst();
  if (!row) return undefined;
  const result = await db.deleteFrom("sessions").where("id", "=", row.session_id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1 ? { userId: row.user_id, consumerId: row.consumer_id } : undefined;
}

/** Records a use of token credentials, unless one was recorded after `sinceIso`. */
export async function touchToken(db: Kysely<Schema>, token: string, nowIso: string, sinceIso: string): Promise<void> {
  await db
    .updateTable("oauth_tokens")
    .set({ last_used_at: nowIso })
    .where("token", "=", token)
    .where((eb) => eb.or([eb("last_used_at", "is", null), eb("last_used_at", "<", sinceIso)]))
    .execute();
}
