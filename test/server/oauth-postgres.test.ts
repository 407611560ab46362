// The OAuth provider's tables on PostgreSQL: the flow, a replayed nonce (also concurrently), listing, revocation and the
// consumer's cascade, on a fresh database.
import { describe, expect, it } from "vitest";
import { authHeader, createConsumer, INJECT_BASE, injectFlow, signer } from "../helpers/oauth.js";
import { startPostgresTestServer } from "../helpers/postgres.js";
import { problemOf, useTestServer } from "../helpers/server.js";

describe("the OAuth provider on PostgreSQL", () => {
  const server = useTestServer({}, startPostgresTestServer);

  it("runs the flow, refuses a replay, lists, revokes, and cascades a consumer's deletion", async () => {
    const consumer = await createConsumer(server.app, server.token);
    const { access } = await injectFlow(server.app, consumer, server.token);
    const identity = () => authHeader(signer(consumer), { method: "GET", url: `${INJECT_BASE}/oAuth` }, access);
    const header = identity();
    expect(
      (await server.app.inject({ method: "GET", url: "/oAuth", headers: { authorization: header } })).statusCode,
    ).toBe(200);
    problemOf(
      await server.app.inject({ method: "GET", url: "/oAuth", headers: { authorization: header } }),
      401,
      "oauth_nonce_reused",
    );

    // concurrent requests share one commit of their nonces: a header sent four times at once passes once
    const concurrent = identity();
    const statuses = await Promise.all(
      Array.from({ length: 4 }, () =>
        server.app.inject({ method: "GET", url: "/oAuth", headers: { authorization: concurrent } }),
      ),
    );
    expect(statuses.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401]);

    const list = await server.call("GET", "/oauth/tokens");
    expect(list.json()).toMatchObject({ total: 1, data: [{ token: access.token, consumerId: consumer.id }] });
    const revoked = await server.call("DELETE", `/oauth/tokens/${access.token}`);
    expect(revoked.statusCode).toBe(204);
    problemOf(
      await server.app.inject({ method: "GET", url: "/oAuth", headers: { authorization: identity() } }),
      401,
      "oauth_token_invalid",
    );

    const second = (await injectFlow(server.app, consumer, server.token)).access;
    const deleted = await server.call("DELETE", `/Resources/${consumer.id}`);
    expect(deleted.statusCode).toBe(204);
    const db = server.app.services.store.db;
    expect(await db.selectFrom("oauth_tokens").selectAll().where("token", "=", second.token).execute()).toEqual([]);
    expect(await db.selectFrom("oauth_nonces").selectAll().execute()).toEqual([]);
    expect(await db.selectFrom("oauth_temporary_credentials").selectAll().execute()).toEqual([]);
  });
});
