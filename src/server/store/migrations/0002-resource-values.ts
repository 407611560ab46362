import type { Kysely, Migration } from "kysely";

export const resourceValues: Migration = {
  async up(db: Kysely<unknown>) {
    // every scalar of every resource, under its lower-cased path: filters and sorts run here, indexed
    await db.schema
      .createTable("resource_values")
      .addColumn("resource_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
      .addColumn("path", "text", (c) => c.notNull())
      .addColumn("elem", "integer")
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("text_value", "text")
      .addColumn("num_value", "double precision")
      .execute();
    await db.schema
      .createIndex("resource_values_text_idx")
      .on("resource_values")
      .columns(["path", "text_value"])
      .execute();
    await db.schema
      .createIndex("resource_values_num_idx")
      .on("resource_values")
      .columns(["path", "num_value"])
      .execute();
    await db.schema
      .createIndex("resource_values_owner_idx")
      .on("resource_values")
      .columns(["resource_id", "path"])
      .execute();
    await db.schema
      .createTable("resource_secrets")
      .addColumn("resource_id", "text", (c) => c.primaryKey().references("resources.id").onDelete("cascade"))
      .addColumn("secret", "text", (c) => c.notNull())
      .execute();
  },
};
