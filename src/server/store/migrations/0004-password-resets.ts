import type { Kysely, Migration } from "kysely";

export const passwordResets: Migration = {
  async up(db: Kysely<unknown>) {
    // only a hash of each token is kept: a copy of the database cannot reset anyone's password
    await db.schema
      .createTable("password_resets")
      .addColumn("token_hash", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("used_at", "text")
      .execute();
    await db.schema.createIndex("password_resets_user_idx").on("password_resets").column("user_id").execute();
  },
};
