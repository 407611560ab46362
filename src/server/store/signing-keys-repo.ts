import type { Kysely } from "kysely";
import type { Schema, SigningKeysTable } from "./schema.js";

export type SigningKeyRow = SigningKeysTable;

export async function listSigningKeys(db: Kysely<Schema>): Promise<SigningKeyRow[]> {
  return db.selectFrom("signing_keys").selectAll().orderBy("sign_from").execute();
}

/** Adds a key; a kid already there (two instances importing the same key files) is kept as it is. */
export async function insertSigningKey(db: Kysely<Schema>, row: SigningKeyRow): Promise<void> {
  await db
    .insertInto("signing_keys")
    .values(row)
    .onConflict((oc) => oc.column("kid").doNothing())
    .execute();
}

export async function deleteSigningKey(db: Kysely<Schema>, kid: string): Promise<void> {
  await db.deleteFrom("signing_keys").where("kid", "=", kid).execute();
}
