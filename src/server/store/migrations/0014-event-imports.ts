import type { Kysely, Migration } from "kysely";

export const eventImports: Migration = {
  async up(db: Kysely<unknown>) {
    // an atomic import stages its events here, request by request, and writes them all in one
    // transaction at its commit: a file larger than one request is still all or nothing, remote too
    await db.schema
      .createTable("event_imports")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("created_by", "text", (c) => c.notNull())
      .addColumn("on_conflict", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("next_seq", "integer", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("event_import_items")
      .addColumn("import_id", "text", (c) => c.notNull().references("event_imports.id").onDelete("cascade"))
      .addColumn("seq", "integer", (c) => c.notNull())
      .addColumn("ref", "integer")
      .addColumn("body", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("event_import_items_pk", ["import_id", "seq"])
      .execute();
  },
};
