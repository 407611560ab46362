import type { Kysely, Migration } from "kysely";

export const oauth: Migration = {
  async up(db: Kysely<unknown>) {
    // the OAuth 1.0a provider: accepted nonces, temporary credentials, token credentials
    await db.schema
      .createTable("oauth_nonces")
      .addColumn("consumer_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
      .addColumn("token", "text", (c) => c.notNull())
      .addColumn("nonce", "text", (c) => c.notNull())
      .addColumn("ts", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("oauth_nonces_pk", ["consumer_id", "token", "nonce", "ts"])
      .execute();
    await db.schema.createIndex("oauth_nonces_expires_at_idx").on("oauth_nonces").column("expires_at").execute();

    await db.schema
      .createTable("oauth_temporary_credentials")
      .addColumn("token", "text", (c) => c.primaryKey())
      .addColumn("secret", "text", (c) => c.notNull())
      .addColumn("consumer_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
      .addColumn("callback", "text", (c) => c.notNull())
      .addColumn("verifier_hash", "text")
      .addColumn("user_id", "text", (c) => c.references("resources.id").onDelete("cascade"))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("authorized_at", "text")
      .addColumn("used_at", "text")
      .execute();
    for (const column of ["consumer_id", "user_id", "expires_at"]) {
      await db.schema
        .createIndex(`oauth_temporary_credentials_${column}_idx`)
        .on("oauth_temporary_credentials")
        .column(column)
        .execute();
    }

    await db.schema
      .createTable("oauth_tokens")
      .addColumn("token", "text", (c) => c.primaryKey())
      .addColumn("secret", "text", (c) => c.notNull())
      .addColumn("consumer_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
      .addColumn("user_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
      .addColumn("session_id", "text", (c) => c.notNull().unique().references("sessions.id").onDelete("cascade"))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .execute();
    for (const column of ["consumer_id", "user_id"]) {
      await db.schema.createIndex(`oauth_tokens_${column}_idx`).on("oauth_tokens").column(column).execute();
    }
  },
};
