import type { Kysely, Migration } from "kysely";

export const apiTokens: Migration = {
  async up(db: Kysely<unknown>) {
    // API tokens for scripts (spec 1.7): a row per token, the token itself never stored, only its
    // SHA-256, which every request looks up; a revoked token keeps its row (revoked_at) so that
    // it is refused as revoked rather than unknown, and leaves with its owner
    await db.schema
      .createTable("api_tokens")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("token_hash", "text", (c) => c.notNull().unique())
      .addColumn("user_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("scopes", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("revoked_at", "text")
      .addColumn("last_used_at", "text")
      .addColumn("last_used_ip", "text")
      .execute();
    await db.schema.createIndex("api_tokens_user_id_idx").on("api_tokens").columns(["user_id", "created_at"]).execute();
  },
};
