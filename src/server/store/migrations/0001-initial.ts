import type { Kysely, Migration } from "kysely";

export const initial: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("resources")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("resource_type", "text", (c) => c.notNull())
      .addColumn("external_id", "text")
      .addColumn("display_name", "text")
      .addColumn("user_name_key", "text", (c) => c.unique())
      .addColumn("attributes", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("version", "integer", (c) => c.notNull())
      .execute();
    for (const column of ["resource_type", "external_id", "created_at", "updated_at"]) {
      await db.schema.createIndex(`resources_${column}_idx`).on("resources").column(column).execute();
    }

    await db.schema
      .createTable("credentials")
      .addColumn("user_id", "text", (c) => c.primaryKey().references("resources.id").onDelete("cascade"))
      .addColumn("password_hash", "text")
      .addColumn("first_login", "integer", (c) => c.notNull())
      .addColumn("failed_logins", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("locked_until", "text")
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("sessions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("revoked_at", "text")
      .execute();
    await db.schema.createIndex("sessions_user_id_idx").on("sessions").column("user_id").execute();
    await db.schema.createIndex("sessions_expires_at_idx").on("sessions").column("expires_at").execute();

    await db.schema
      .createTable("events")
      .addColumn("code_key", "text", (c) => c.primaryKey())
      .addColumn("code", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("description", "text")
      .addColumn("type", "text")
      .addColumn("starts_at", "text", (c) => c.notNull())
      .addColumn("ends_at", "text")
      .addColumn("all_day", "integer")
      .addColumn("location", "text")
      .addColumn("organizer", "text")
      .addColumn("attendees", "text")
      .addColumn("tags", "text")
      .addColumn("custom_fields", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("created_by", "text")
      .addColumn("version", "integer", (c) => c.notNull())
      .execute();
    // every sortable field gets an index whose tie-breaker is the unique key, as the list orders by it
    for (const column of [
      "name",
      "type",
      "starts_at",
      "ends_at",
      "all_day",
      "location",
      "organizer",
      "created_at",
      "updated_at",
      "created_by",
    ]) {
      await db.schema.createIndex(`events_${column}_idx`).on("events").columns([column, "code_key"]).execute();
    }
  },
};
