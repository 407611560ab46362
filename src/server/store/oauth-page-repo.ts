/**
 * What the browser authorization page keeps: the temporary credentials it shows (with their
 * consumer's name), the single-use tokens of the forms it served, and the owner's refusal.
 */
import type { Kysely } from "kysely";
import type { Schema } from "./schema.js";

export interface PageTemporary {
  token: string;
  callback: string;
  expiresAt: string;
  /** approved, exchanged: no longer for the page */
  settled: boolean;
  consumerId: string;
  consumerName?: string;
}

export async function findPageTemporary(db: Kysely<Schema>, token: string): Promise<PageTemporary | undefined> {
  const row = await db
    .selectFrom("oauth_temporary_credentials as t")
    .innerJoin("resources as c", "c.id", "t.consumer_id")
    .select(["t.token", "t.callback", "t.expires_at", "t.authorized_at", "t.used_at", "t.consumer_id", "c.attributes"])
    .where("t.token", "=", token)
    .executeTakeFirst();
  if (!row) return undefined;
  const attributes = JSON.parse(row.attributes) as { name?: unknown };
  return {
    token: row.token,
    consumerId: row.consumer_id,
    callback: row.callback,
    expiresAt: row.expires_at,
    settled: !!(row.authorized_at || row.used_at),
    ...(typeof attributes.name === "string" && { consumerName: attributes.name }),
  };
}

export async function insertPageForm(
  db: Kysely<Schema>,
  row: { token_hash: string; temporary_token: string; expires_at: string },
): Promise<void> {
  await db.insertInto("oauth_page_forms").values(row).execute();
}

/** Spends a form token: true once, for the temporary credentials it was issued with, before it expires. */
export async function consumePageForm(
  db: Kysely<Schema>,
  check: { tokenHash: string; temporaryToken: string; nowIso: string },
): Promise<boolean> {
  const result = await db
    .deleteFrom("oauth_page_forms")
    .where("token_hash", "=", check.tokenHash)
    .where("temporary_token", "=", check.temporaryToken)
    .where("expires_at", ">", check.nowIso)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** The owner's refusal: the temporary credentials (and their forms) are gone, unless already approved. */
export async function denyTemporary(db: Kysely<Schema>, token: string): Promise<boolean> {
  const result = await db
    .deleteFrom("oauth_temporary_credentials")
    .where("token", "=", token)
    .where("authorized_at", "is", null)
    .where("used_at", "is", null)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}
