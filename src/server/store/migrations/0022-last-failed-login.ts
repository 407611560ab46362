import { type Kysely, type Migration, sql } from "kysely";

export const lastFailedLogin: Migration = {
  async up(db: Kysely<unknown>) {
    // failed logins are forgotten a day after the last one, for accounts as for unknown names
    await db.schema.alterTable("credentials").addColumn("last_failed_login_at", "text").execute();
    await sql`update credentials set last_failed_login_at = updated_at where failed_logins > 0`.execute(db);
  },
};
