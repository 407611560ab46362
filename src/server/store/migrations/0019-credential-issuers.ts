import { type Kysely, type Migration, sql } from "kysely";

export const credentialIssuers: Migration = {
  async up(db: Kysely<unknown>) {
    // who issued a password the user did not choose, and a reset or invitation link: the role it
    // was issued under (null: the user's own), and for a link the account's stamp at issue
    await db.schema.alterTable("credentials").addColumn("issuer_role", "text").execute();
    await db.schema.alterTable("password_resets").addColumn("issuer_role", "text").execute();
    await db.schema.alterTable("password_resets").addColumn("account_stamp", "text").execute();
    // a temporary password pending on an ordinary account may have come from support: it is
    // taken as support's, so that a later promotion voids it (the issuer was never recorded)
    await sql`update credentials set issuer_role = 'support'
      where first_login = 1 and password_hash is not null and not exists (
        select 1 from resource_values v where v.resource_id = credentials.user_id
          and v.path = 'roles.value' and v.text_value in ('admin', 'support'))`.execute(db);
  },
};
