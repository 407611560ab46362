import type { Kysely, Migration } from "kysely";

export const linksMadeWhenSent: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("password_resets").addColumn("mail_id", "text").execute();
    await db.schema.createIndex("password_resets_mail_idx").on("password_resets").column("mail_id").execute();
  },
};
