import type { Kysely, Migration } from "kysely";

export const sessionDetails: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("sessions").addColumn("client_ip", "text").execute();
    await db.schema.alterTable("sessions").addColumn("user_agent", "text").execute();
    await db.schema.alterTable("sessions").addColumn("last_used_at", "text").execute();
  },
};
