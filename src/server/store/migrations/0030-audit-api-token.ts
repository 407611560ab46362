import type { Kysely, Migration } from "kysely";

export const auditApiToken: Migration = {
  async up(db: Kysely<unknown>) {
    // which API token acted, when one did: the owner alone does not say which script to stop
    await db.schema.alterTable("audit_log").addColumn("actor_api_token_id", "text").execute();
  },
};
