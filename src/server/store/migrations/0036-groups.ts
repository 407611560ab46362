import type { Kysely, Migration } from "kysely";

/**
 * SCIM Groups (spec 1.9): a group's row, its roles as three flags (what a User's effective roles
 * read in one scalar subquery, on either store), and its members one row each, so that adding
 * 1,000 members writes 1,000 small rows whatever the group's size, and a group read without its
 * members never reads them. A member leaves with its User, a membership with its group.
 */
export const groups: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("groups")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("display_name", "text", (c) => c.notNull())
      // the display name in lower case (NFC): unique, what `displayName eq` and the sort read
      .addColumn("display_key", "text", (c) => c.notNull().unique())
      .addColumn("external_id", "text", (c) => c.unique())
      .addColumn("grants_admin", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("grants_support", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("grants_member", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("version", "integer", (c) => c.notNull().defaultTo(1))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("group_members")
      .addColumn("group_id", "text", (c) => c.notNull().references("groups.id").onDelete("cascade"))
      .addColumn("user_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
      .addPrimaryKeyConstraint("group_members_pk", ["group_id", "user_id"])
      .execute();
    // a User's groups (its effective roles, on every request it makes)
    await db.schema
      .createIndex("group_members_user_idx")
      .on("group_members")
      .columns(["user_id", "group_id"])
      .execute();
  },
};
