import type { Kysely, Migration } from "kysely";

export const totpFactors: Migration = {
  async up(db: Kysely<unknown>) {
    // one factor per user: pending (enabled_at null) until a first code proves the enrollment
    await db.schema
      .createTable("totp_factors")
      .addColumn("user_id", "text", (c) => c.primaryKey().references("resources.id").onDelete("cascade"))
      // the base32 seed, AES-256-GCM-sealed under the deployment secret with the user id as
      // additional data: a copy of the database alone yields no working seed
      .addColumn("sealed_secret", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("enabled_at", "text")
      // the RFC 6238 time step of the last code accepted: a code of that step or an earlier one
      // is refused, so a code seen over a shoulder or in a log cannot be replayed (an integer:
      // 30 s steps fill 31 bits in the year 4011, and both drivers read it back as a number)
      .addColumn("last_step", "integer")
      .execute();
    // single use; only a hash is kept (the codes are shown once, at activation)
    await db.schema
      .createTable("totp_recovery_codes")
      .addColumn("code_hash", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("used_at", "text")
      .execute();
    await db.schema.createIndex("totp_recovery_codes_user_idx").on("totp_recovery_codes").column("user_id").execute();
  },
};
