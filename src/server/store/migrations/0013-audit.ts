import type { Kysely, Migration } from "kysely";

export const audit: Migration = {
  async up(db: Kysely<unknown>) {
    // append-only: no code path updates a row; rows leave only by retention, which deletes by id
    // range (ids sort in time order), so no index on time: each index is a page more per commit
    await db.schema
      .createTable("audit_log")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("time", "text", (c) => c.notNull())
      .addColumn("actor_id", "text")
      .addColumn("actor_user_name", "text")
      .addColumn("actor_consumer_id", "text")
      .addColumn("action", "text", (c) => c.notNull())
      .addColumn("target_type", "text")
      .addColumn("target_id", "text")
      .addColumn("target_name", "text")
      .addColumn("outcome", "text", (c) => c.notNull())
      .addColumn("request_id", "text")
      .addColumn("client_ip", "text")
      .addColumn("user_agent", "text")
      .addColumn("details", "text")
      .execute();
    // a member's view: the records where they are the actor or the target, newest first
    await db.schema.createIndex("audit_log_actor_idx").on("audit_log").columns(["actor_id", "id"]).execute();
    await db.schema.createIndex("audit_log_target_idx").on("audit_log").columns(["target_id", "id"]).execute();
  },
};
