import type { Kysely, Migration } from "kysely";

export const signingKeys: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("signing_keys")
      .addColumn("kid", "text", (c) => c.primaryKey())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("sign_from", "text", (c) => c.notNull())
      .addColumn("sealed_private_jwk", "text", (c) => c.notNull())
      .execute();
  },
};
