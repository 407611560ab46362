import type { Kysely, Migration } from "kysely";

export const serviceAccounts: Migration = {
  async up(db: Kysely<unknown>) {
    // a User that is not a person (spec 1.9): no password, no second factor, no login; it acts
    // only through its API tokens. A column, not an attribute: no SCIM write can set or clear it
    await db.schema
      .alterTable("resources")
      .addColumn("service_account", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
    // the token's name as it was when it acted: revoking or deleting the token keeps the record whole
    await db.schema.alterTable("audit_log").addColumn("actor_api_token_name", "text").execute();
  },
};
