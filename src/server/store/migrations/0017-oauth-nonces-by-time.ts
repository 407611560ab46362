import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

export const oauthNoncesByTime: Migration = {
  async up(db: Kysely<unknown>) {
    // A signed request's one write. Keyed by timestamp first, a new nonce lands beside the
    // last ones (clients sign at about the server's time) instead of at a random place in the
    // key, and expiry is that key's prefix, so the separate expiry index (a second B-tree
    // written by every nonce) goes: about half the cost of a nonce write.
    // The accepted nonces are copied, so an upgrade does not reopen the replay window.
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    const table = db.schema
      .createTable("oauth_nonces_by_time")
      .addColumn("ts", "bigint", (c) => c.notNull())
      .addColumn("consumer_id", "text", (c) => c.notNull().references("resources.id").onDelete("cascade"))
      .addColumn("token", "text", (c) => c.notNull())
      .addColumn("nonce", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("oauth_nonces_by_time_pk", ["ts", "consumer_id", "token", "nonce"]);
    // SQLite: the key is the table (no rowid B-tree beside it)
    await (postgres ? table : table.modifyEnd(sql`without rowid`)).execute();
    await sql`insert into oauth_nonces_by_time (ts, consumer_id, token, nonce)
      select cast(ts as bigint), consumer_id, token, nonce from oauth_nonces`.execute(db);
    await db.schema.dropTable("oauth_nonces").execute();
    await db.schema.alterTable("oauth_nonces_by_time").renameTo("oauth_nonces").execute();
  },
};
