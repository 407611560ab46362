import type { Kysely, Migration } from "kysely";

export const mailJobs: Migration = {
  async up(db: Kysely<unknown>) {
    // the queue also carries work for the sender to do off the request path (a reset asked for
    // by name or address, resolved into a token and its e-mail, or into nothing), not only mail
    await db.schema
      .alterTable("mail_queue")
      .addColumn("kind", "text", (c) => c.notNull().defaultTo("message"))
      .execute();
  },
};
