import type { Kysely, Migration } from "kysely";

export const oauthWeb: Migration = {
  async up(db: Kysely<unknown>) {
    // the browser authorization page: each form it serves carries a single-use token bound to
    // the temporary credentials; only its hash is kept, and it goes with them
    await db.schema
      .createTable("oauth_page_forms")
      .addColumn("token_hash", "text", (c) => c.primaryKey())
      .addColumn("temporary_token", "text", (c) =>
        c.notNull().references("oauth_temporary_credentials.token").onDelete("cascade"),
      )
      .addColumn("expires_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("oauth_page_forms_temporary_idx")
      .on("oauth_page_forms")
      .column("temporary_token")
      .execute();
    // connected applications show when a grant was last used (written at most once a minute)
    await db.schema.alterTable("oauth_tokens").addColumn("last_used_at", "text").execute();
  },
};
