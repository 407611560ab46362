import type { Kysely, Migration } from "kysely";

export const supportInvitations: Migration = {
  async up(db: Kysely<unknown>) {
    // an invitation is a single-use link like a reset, so it shares the table and PUT /resetPassword
    await db.schema.alterTable("password_resets").addColumn("purpose", "text").execute();
  },
};
