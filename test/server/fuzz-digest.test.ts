/**
 * The fuzzer's oracle for "a refused request changes nothing" (test/helpers/db-digest.ts), on
 * what a refused request may sweep away: expired OAuth temporary credentials, pruned by any
 * OAuth-signed request. `npm run fuzz` found it (seed 352983066, PostgreSQL, events.imports.abort
 * as anonymous: `DELETE /api/crm/v1/events/imports/%20` with `Authorization: OAuth `, 400, and
 * the temporary credentials of the oauth.* cases ten minutes earlier gone).
 */
import { describe, expect, it } from "vitest";
import { databaseDigest } from "../helpers/db-digest.js";
import { changedOnRefusal } from "../helpers/fuzz-invariants.js";
import { createConsumer, injectTemporaryCredentials } from "../helpers/oauth.js";
import { manualClock, useTestServer } from "../helpers/server.js";

describe("the fuzzer's database digest", () => {
  const clock = manualClock();
  const server = useTestServer({ clock: clock.clock });

  it("leaves out temporary credentials that expired before its instant, which any OAuth request may prune", async () => {
    const app = server.app;
    const db = app.services.store.db;
    const consumer = await createConsumer(app, server.token);
    await injectTemporaryCredentials(app, consumer);
    // past the temporary credentials' 10 minutes and the prune's once a minute
    clock.advance(11 * 60_000);
    const count = async () => (await db.selectFrom("oauth_temporary_credentials").selectAll().execute()).length;
    expect(await count()).toBe(1);

    const asOf = new Date(clock.clock().getTime() + 60_000);
    const before = await databaseDigest(db, { asOf });
    const refused = await app.inject({
      method: "DELETE",
      url: "/api/crm/v1/events/imports/%20",
      headers: { authorization: "OAuth " },
    });
    expect(refused.statusCode).toBeGreaterThanOrEqual(400);
    const after = await databaseDigest(db, { asOf });

    expect(await count(), "the refused request pruned the expired credentials").toBe(0);
    expect(
      changedOnRefusal({ status: refused.statusCode, headers: refused.headers, body: refused.body }, before, after),
    ).toBeUndefined();
  });

  it("keeps temporary credentials that are still live: a refused request must not touch them", async () => {
    const db = server.app.services.store.db;
    const later = new Date(clock.clock().getTime() + 10 * 60_000).toISOString();
    const asOf = new Date(clock.clock().getTime() + 60_000);
    const before = await databaseDigest(db, { asOf });
    const consumer = await db
      .selectFrom("resources")
      .select("id")
      .where("resource_type", "=", "OAuthConsumer")
      .executeTakeFirstOrThrow();
    await db
      .insertInto("oauth_temporary_credentials")
      .values({
        token: "t".repeat(36),
        secret: "s",
        consumer_id: consumer.id,
        callback: "oob",
        expires_at: later,
        created_at: clock.clock().toISOString(),
        verifier_hash: null,
        user_id: null,
        authorized_at: null,
        used_at: null,
      })
      .execute();
    expect((await databaseDigest(db, { asOf })).hash).not.toBe(before.hash);
  });
});
