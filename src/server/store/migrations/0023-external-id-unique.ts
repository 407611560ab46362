import { type Kysely, type Migration, sql } from "kysely";

export const externalIdUnique: Migration = {
  async up(db: Kysely<unknown>) {
    // SCIM clients find a resource by its externalId (RFC 7643 section 3.1): unique per type. Where
    // resources of one type already share one, the oldest keeps it in the indexed column; the
    // others keep it in their attributes, are no longer found by it, and their next write must
    // give one of their own (409 otherwise). Nothing is lost, and no start is blocked.
    await sql`update resources set external_id = null
      where external_id is not null and exists (
        select 1 from resources o
        where o.resource_type = resources.resource_type and o.external_id = resources.external_id
          and (o.created_at < resources.created_at or (o.created_at = resources.created_at and o.id < resources.id)))`.execute(
      db,
    );
    await db.schema
      .createIndex("resources_type_external_id_key")
      .on("resources")
      .columns(["resource_type", "external_id"])
      .unique()
      .execute();
  },
};
