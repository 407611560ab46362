import type { Kysely, Migration } from "kysely";

/**
 * Deleted Groups kept for a while (`--retain-deleted`, spec 1.10), as deleted Users are (0038): the
 * group's row as it was and its members, out of `groups` so that no read, filter or role can meet
 * it. Its display name key and externalId stay unique here, and a create or rename checks them, so
 * that a restore never collides.
 */
export const deletedGroups: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("deleted_groups")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("display_name", "text", (c) => c.notNull())
      .addColumn("display_key", "text", (c) => c.notNull().unique())
      .addColumn("external_id", "text", (c) => c.unique())
      // the groups row (JSON): its name, externalId and the roles it granted
      .addColumn("row", "text", (c) => c.notNull())
      // the ids of its members (JSON array); a User gone meanwhile is not brought back
      .addColumn("member_ids", "text", (c) => c.notNull())
      .addColumn("deleted_at", "text", (c) => c.notNull())
      .addColumn("purge_after", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("deleted_groups_purge_idx").on("deleted_groups").column("purge_after").execute();
  },
};
