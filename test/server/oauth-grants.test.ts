/**
 * Connected applications through inject(): a member lists and revokes its own OAuth grants (not
 * another user's: 404), an admin everyone's; when a grant was last used, written at most once a
 * minute; an application cannot manage its user's grants; a password reset or a disabled account
 * ends the grants.
 */

import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { accountStamp } from "../../src/server/services/issued-credentials.js";
import { saveResetToken } from "../../src/server/store/reset-tokens-repo.js";
import { findAccountById } from "../../src/server/store/users-repo.js";
import { authHeader, type Credentials, createConsumer, INJECT_BASE, injectFlow, signer } from "../helpers/oauth.js";
import { bearer, insertUser, login as loginAs, manualClock, problemOf, useTestServer } from "../helpers/server.js";

interface Grant {
  token: string;
  userName: string;
  consumerName?: string;
  createdAt: string;
  lastUsedAt?: string;
}

describe("connected applications", () => {
  const clock = manualClock();
  const server = useTestServer({ clock: clock.clock });
  let admin: string;
  let consumer: Awaited<ReturnType<typeof createConsumer>>;

  beforeAll(async () => {
    admin = server.token;
    consumer = await createConsumer(server.app, admin, { name: "Partner CRM" });
  });

  let users = 0;
  /** A member with a live grant to the consumer: its Bearer token and the grant's credentials. */
  async function memberWithGrant() {
    users += 1;
    const user = await insertUser(server.app, {
      userName: `member.${users}`,
      password: `a long passphrase for member ${users}`,
      roles: ["member"],
    });
    const token = (await loginAs(server.app, user.userName, user.password)).token;
    const { access } = await injectFlow(server.app, consumer, token);
    return { ...user, token, access };
  }

  const signedGet = (access: Credentials, path = "/api/crm/v1/events") => {
    const oauth = signer(consumer);
    oauth.getTimeStamp = () => Math.floor(clock.clock().getTime() / 1000);
    return server.app.inject({
      method: "GET",
      url: path,
      headers: { authorization: authHeader(oauth, { method: "GET", url: `${INJECT_BASE}${path}` }, access) },
    });
  };

  const list = async (token: string, query = "") => {
    const response = await server.app.inject({ method: "GET", url: `/oauth/tokens${query}`, headers: bearer(token) });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { data: Grant[] }).data;
  };

  const revoke = (token: string, grant: string) =>
    server.app.inject({ method: "DELETE", url: `/oauth/tokens/${grant}`, headers: bearer(token) });

  it("a member lists only its own grants, with the consumer, when granted and when last used", async () => {
    const mia = await memberWithGrant();
    const other = await memberWithGrant();
    const before = await list(mia.token);
    expect(before).toHaveLength(1);
    expect(before[0]).toMatchObject({ token: mia.access.token, userName: mia.userName, consumerName: "Partner CRM" });
    expect(before[0]!.lastUsedAt).toBeUndefined();
    expect((await signedGet(mia.access)).statusCode).toBe(200);
    const [after] = await list(mia.token);
    expect(after!.lastUsedAt).toBe(clock.clock().toISOString());
    // another user's: admin only
    problemOf(
      await server.app.inject({ method: "GET", url: `/oauth/tokens?userId=${other.id}`, headers: bearer(mia.token) }),
      403,
      "forbidden",
    );
    // the admin sees both, and one user's on request
    const all = (await list(admin)).map((g) => g.token);
    expect(all).toEqual(expect.arrayContaining([mia.access.token, other.access.token]));
    expect((await list(admin, `?userId=${other.id}`)).map((g) => g.token)).toEqual([other.access.token]);
  });

  it("records the last use at most once a minute", async () => {
    const mia = await memberWithGrant();
    const lastUsed = async () => (await list(mia.token))[0]!.lastUsedAt;
    expect((await signedGet(mia.access)).statusCode).toBe(200);
    const first = await lastUsed();
    expect(first).toBeDefined();
    clock.advance(30_000);
    expect((await signedGet(mia.access)).statusCode).toBe(200);
    expect(await lastUsed()).toBe(first);
    clock.advance(31_000);
    expect((await signedGet(mia.access)).statusCode).toBe(200);
    expect(Date.parse((await lastUsed())!) - Date.parse(first!)).toBe(61_000);
  });

  it("a member revokes its own grant (the partner's next call is 401), never another's (404)", async () => {
    const mia = await memberWithGrant();
    const other = await memberWithGrant();
    problemOf(await revoke(mia.token, other.access.token), 404, "not_found");
    expect((await signedGet(other.access)).statusCode).toBe(200);
    problemOf(await revoke(mia.token, "no-such-grant"), 404, "not_found");
    expect((await revoke(mia.token, mia.access.token)).statusCode).toBe(204);
    problemOf(await signedGet(mia.access), 401, "oauth_token_invalid");
    expect(await list(mia.token)).toEqual([]);
    // an admin revokes anyone's
    expect((await revoke(admin, other.access.token)).statusCode).toBe(204);
    problemOf(await signedGet(other.access), 401, "oauth_token_invalid");
  });

  it("an application acting for a member cannot list or revoke the member's grants", async () => {
    const mia = await memberWithGrant();
    problemOf(await signedGet(mia.access, "/oauth/tokens"), 403, "forbidden");
    expect((await signedGet(mia.access)).statusCode).toBe(200);
  });

  it("a password reset ends the user's grants", async () => {
    const mia = await memberWithGrant();
    const resetToken = "a-reset-token-made-by-the-test";
    const now = clock.clock();
    await saveResetToken(server.app.services.store.db, {
      tokenHash: createHash("sha256").update(resetToken).digest("hex"),
      userId: mia.id,
      createdAt: now,
      expiresAt: new Date(now.getTime() + 600_000),
      accountStamp: accountStamp((await findAccountById(server.app.services.store.db, mia.id))!),
    });
    const reset = await server.app.inject({
      method: "PUT",
      url: "/resetPassword",
      payload: { token: resetToken, newPassword: "a brand new passphrase after reset 9" },
    });
    expect(reset.statusCode, reset.body).toBe(204);
    problemOf(await signedGet(mia.access), 401, "oauth_token_invalid");
    expect(await list(admin, `?userId=${mia.id}`)).toEqual([]);
  });

  it("a disabled account ends the user's grants, and enabling it again does not bring them back", async () => {
    const mia = await memberWithGrant();
    const setActive = async (active: boolean) => {
      const current = await server.app.inject({ method: "GET", url: `/Resources/${mia.id}`, headers: bearer(admin) });
      const put = await server.app.inject({
        method: "PUT",
        url: `/Resources/${mia.id}`,
        headers: { ...bearer(admin), "if-match": String(current.headers.etag) },
        payload: { ...(current.json() as Record<string, unknown>), active },
      });
      expect(put.statusCode, put.body).toBe(200);
    };
    await setActive(false);
    problemOf(await signedGet(mia.access), 401, "oauth_token_invalid");
    await setActive(true);
    problemOf(await signedGet(mia.access), 401, "oauth_token_invalid");
  });
});
