import type { Kysely, Migration } from "kysely";

export const mailQueue: Migration = {
  async up(db: Kysely<unknown>) {
    // outgoing mail lives in the database, so that any instance may send it and a restart loses none
    await db.schema
      .createTable("mail_queue")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("recipient", "text", (c) => c.notNull())
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("body_text", "text")
      .addColumn("body_html", "text")
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("next_attempt_at", "text", (c) => c.notNull())
      .addColumn("claimed_until", "text")
      .addColumn("claimed_by", "text")
      .addColumn("last_error", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("sent_at", "text")
      .execute();
    await db.schema.createIndex("mail_queue_due_idx").on("mail_queue").columns(["status", "next_attempt_at"]).execute();
    await db.schema.createIndex("mail_queue_sent_at_idx").on("mail_queue").column("sent_at").execute();
  },
};
