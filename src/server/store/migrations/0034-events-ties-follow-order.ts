import { type Kysely, type Migration, sql } from "kysely";

export const eventsTiesFollowOrder: Migration = {
  async up(db: Kysely<unknown>) {
    // The code now breaks ties in the direction of the order's last key (services/events.ts), so
    // `order=-startsAt` reads the (starts_at, code_key) index of 0001 backwards. The index 0008
    // made for the code ascending under a descending start serves no order now, and cost every
    // event write an entry.
    await sql`drop index events_starts_at_desc_idx`.execute(db);
  },
};
