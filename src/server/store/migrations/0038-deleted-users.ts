import type { Kysely, Migration } from "kysely";

/**
 * Deleted Users kept for a while (`--retain-deleted`, spec 1.10): the User's row as it was and the
 * groups it was in, out of `resources` so that no read, filter or login can meet it. Its userName
 * key and externalId stay unique here, and a create checks them, so that a restore never collides.
 */
export const deletedUsers: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("deleted_users")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_name", "text", (c) => c.notNull())
      .addColumn("user_name_key", "text", (c) => c.notNull().unique())
      .addColumn("external_id", "text", (c) => c.unique())
      // the resources row (JSON), its account state left out: a restored User has no session or token
      .addColumn("row", "text", (c) => c.notNull())
      // the ids of its groups (JSON array); a group deleted meanwhile is not brought back
      .addColumn("group_ids", "text", (c) => c.notNull())
      .addColumn("deleted_at", "text", (c) => c.notNull())
      .addColumn("purge_after", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("deleted_users_purge_idx").on("deleted_users").column("purge_after").execute();
  },
};
