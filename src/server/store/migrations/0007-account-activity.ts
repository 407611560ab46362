import type { Kysely, Migration } from "kysely";

export const accountActivity: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("credentials").addColumn("last_login_at", "text").execute();
    await db.schema.alterTable("credentials").addColumn("password_changed_at", "text").execute();
  },
};
