import { describe, expect, it } from "vitest";
import { STORES } from "../helpers/postgres.js";
import { ADMIN_PASSWORD, ADMIN_USER, caller, createResource, problemOf, useTestServer } from "../helpers/server.js";

/**
 * Invitations and sessions on both databases: the `invited` state and its filter, a resend that
 * voids the older link, and the session list with its new columns (the browser and SMTP side is
 * test/e2e/invitation.browser.test.ts).
 */

describe.each(STORES)("invitations and sessions on %s", (_store, start) => {
  const server = useTestServer({}, start);
  const admin = server.call;

  const invitedUserNames = async () => {
    const response = await admin(
      "GET",
      `/Resources?resourcetypes=User&filter=${encodeURIComponent("invited eq true")}`,
    );
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { Resources: { userName: string }[] }).Resources.map((u) => u.userName);
  };

  it("shows an invited user until the link is used; a resend leaves one live link", async () => {
    const user = await createResource(admin, {
      resourceType: "User",
      userName: "invitee",
      emails: [{ value: "invitee@example.com", primary: true }],
    });
    expect(user.invited).toBe(false);
    expect(await invitedUserNames()).toEqual([]);
    for (let i = 0; i < 2; i++) {
      const sent = await admin("POST", `/Resources/${user.id}/invitation`);
      expect(sent.statusCode, sent.body).toBe(202);
      expect(sent.json()).toMatchObject({ status: "queued", email: "invitee@example.com" });
    }
    expect(((await admin("GET", `/Resources/${user.id}`)).json() as { invited: boolean }).invited).toBe(true);
    expect(await invitedUserNames()).toEqual(["invitee"]);
    const links = await server.app.services.store.db
      .selectFrom("password_resets")
      .select(["used_at", "purpose"])
      .where("user_id", "=", String(user.id))
      .execute();
    expect(links.map((l) => [l.purpose, l.used_at === null]).sort()).toEqual([
      ["invitation", false],
      ["invitation", true],
    ]);
  });

  it("refuses an invitation without an address, and changes nothing", async () => {
    const user = await createResource(admin, { resourceType: "User", userName: "no.address" });
    problemOf(await admin("POST", `/Resources/${user.id}/invitation`), 409, "conflict");
    expect(await invitedUserNames()).not.toContain("no.address");
  });

  it("lists the caller's sessions with the new columns", async () => {
    const response = await server.app.inject({
      method: "POST",
      url: "/auth/login",
      headers: { "user-agent": "test-agent/1" },
      payload: { userName: ADMIN_USER, password: ADMIN_PASSWORD },
    });
    const me = caller(server.app, (response.json() as { token: string }).token);
    const { sessions } = (await me("GET", "/auth/sessions")).json() as {
      sessions: { current: boolean; userAgent?: string; clientIp?: string; lastUsed?: string }[];
    };
    expect(sessions).toHaveLength(2);
    expect(sessions.find((s) => s.current)).toMatchObject({ userAgent: "test-agent/1", clientIp: "127.0.0.1" });
    expect((await me("DELETE", "/auth/sessions")).json()).toEqual({ ended: 1 });
    problemOf(await admin("GET", "/auth/isLogged"), 401, "token_revoked");
  });
});
