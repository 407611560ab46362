import type { Kysely, Migration } from "kysely";

/**
 * Whether a User's e-mail addresses were last set by a person's delegated credential (an API
 * token or an OAuth grant): a reset or invitation link to a privileged account is not mailed to
 * such an address (contract/policy/addresses.ts). Existing addresses count as confirmed.
 */
export const addressesByDelegate: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable("credentials")
      .addColumn("addresses_by_delegate", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
