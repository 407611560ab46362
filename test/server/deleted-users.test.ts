import { describe, expect, it } from "vitest";
import { STORES } from "../helpers/postgres.js";
import {
  type Call,
  insertUser,
  loggedIn,
  type TestAdmin,
  tryLogin,
  USER_PASSWORD,
  useTestServer,
} from "../helpers/server.js";

/**
 * Deletes that can be undone (spec 1.10, `--retain-deleted`) on both stores: a deleted User is
 * out of every read and of login, its names stay reserved, an admin restores (attributes, roles,
 * groups; no session) or purges it, and the wait ends by itself after the days retained.
 */

type Json = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: a test reads any member of an answer
type Any = any;
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const DAY_MS = 24 * 3600 * 1000;

describe.each(STORES)("deleted users on %s", (_store, start) => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const server = useTestServer({ clock: () => new Date(now), retainDeletedDays: 7 }, start);
  let counter = 0;
  const user = (roles: ("admin" | "support" | "member")[] = ["member"]): Promise<TestAdmin> =>
    insertUser(server.app, { userName: `gone.${++counter}`, password: USER_PASSWORD, roles });

  /** A member in a group, with an externalId and a title, logged in; then deleted by the admin. */
  async function deletedMember(deleteBy: (call: Call, id: string) => Promise<number>) {
    const member = await user();
    const session = await loggedIn(server.app, member.userName);
    const put = await server.call("PATCH", `/Users/${member.id}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "add", value: { externalId: `ext-${member.userName}`, title: "Clerk" } }],
    });
    expect(put.statusCode, put.body).toBe(200);
    const group = await server.call("POST", "/Groups", {
      schemas: [GROUP],
      displayName: `team of ${member.userName}`,
      members: [{ value: member.id }],
    });
    expect(group.statusCode, group.body).toBe(201);
    expect(await deleteBy(server.call, member.id)).toBe(204);
    return { member, session, groupId: (group.json() as Any).id as string };
  }

  const deletes: [path: string, deleteBy: (call: Call, id: string) => Promise<number>][] = [
    ["DELETE /Users/{id}", async (call, id) => (await call("DELETE", `/Users/${id}`)).statusCode],
    ["DELETE /Resources/{id}", async (call, id) => (await call("DELETE", `/Resources/${id}`)).statusCode],
    [
      "/Bulk DELETE",
      async (call, id) => {
        const answer = await call("POST", "/Bulk", {
          schemas: ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],
          Operations: [{ method: "DELETE", path: `/Users/${id}` }],
        });
        return Number((answer.json() as Any).Operations[0].status);
      },
    ],
  ];

  it.each(deletes)(
    "a User deleted by %s answers 404 everywhere, cannot log in, and keeps its names",
    async (_path, by) => {
      const { member, session, groupId } = await deletedMember(by);
      for (const url of [`/Users/${member.id}`, `/Resources/${member.id}`]) {
        expect((await server.call("GET", url)).statusCode, url).toBe(404);
      }
      const filter = encodeURIComponent(`userName eq "${member.userName}"`);
      expect((await server.call("GET", `/Users?filter=${filter}`)).json()).toMatchObject({ totalResults: 0 });
      expect((await server.call("GET", `/Groups/${groupId}`)).json()).toMatchObject({ members: [] });
      expect((await tryLogin(server.app, member.userName, USER_PASSWORD)).statusCode).toBe(401);
      expect((await session("GET", "/Me")).statusCode).toBe(401);
      for (const body of [
        { schemas: [USER], userName: member.userName.toUpperCase() },
        { schemas: [USER], userName: `other.${member.userName}`, externalId: `ext-${member.userName}` },
      ]) {
        const taken = await server.call("POST", "/Users", body);
        expect(taken.statusCode, taken.body).toBe(409);
        expect(taken.json()).toMatchObject({ scimType: "uniqueness" });
        expect((taken.json() as Any).detail).toMatch(/deleted user.*bizctl users restore.*bizctl users purge/);
      }
      const other = await user();
      const renamed = await server.call("PATCH", `/Users/${other.id}`, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "replace", path: "userName", value: member.userName }],
      });
      expect(renamed.statusCode, renamed.body).toBe(409);
      expect(renamed.json()).toMatchObject({ scimType: "uniqueness" });
      const listed = (await server.call("GET", "/DeletedUsers")).json() as Any;
      expect(listed.Resources).toContainEqual({
        id: member.id,
        userName: member.userName,
        externalId: `ext-${member.userName}`,
        deletedAt: new Date(now).toISOString(),
        purgeAfter: new Date(now + 7 * DAY_MS).toISOString(),
      });
    },
  );

  it("restores attributes, roles and group memberships, without a session or a password; audited with the actor", async () => {
    const { member, session, groupId } = await deletedMember(deletes[0][1]);
    const restored = await server.call("POST", `/DeletedUsers/${member.id}/restore`);
    expect(restored.statusCode, restored.body).toBe(200);
    const got = await server.call("GET", `/Users/${member.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toMatchObject({
      userName: member.userName,
      externalId: `ext-${member.userName}`,
      title: "Clerk",
      roles: [{ value: "member" }],
      groups: [{ value: groupId }],
    });
    expect((await session("GET", "/Me")).statusCode).toBe(401);
    expect((await tryLogin(server.app, member.userName, USER_PASSWORD)).statusCode).toBe(401);
    expect((await server.call("GET", "/DeletedUsers")).json()).not.toMatchObject({
      Resources: expect.arrayContaining([expect.objectContaining({ id: member.id })]),
    });
    expect((await server.call("POST", `/DeletedUsers/${member.id}/restore`)).statusCode).toBe(404);
    const audit = await server.call("GET", `/audit?filter=${encodeURIComponent(`target.id eq "${member.id}"`)}`);
    expect(audit.statusCode, audit.body).toBe(200);
    const actions = JSON.stringify(audit.json());
    for (const action of ["user.delete", "user.restore"]) expect(actions).toContain(action);
    expect(actions).toContain(server.admin.userName);
  });

  // what becomes of the user's group by the time the user is restored, and what the restore says of it
  const GROUP_FATES: [fate: string, act: (groupId: string) => Promise<void>, back: boolean, named: boolean][] = [
    ["still there", async () => {}, true, false],
    ["deleted and kept", async (groupId) => void (await server.call("DELETE", `/Groups/${groupId}`)), false, true],
    [
      "deleted and purged",
      async (groupId) => {
        await server.call("DELETE", `/Groups/${groupId}`);
        await server.call("DELETE", `/DeletedGroups/${groupId}`);
      },
      false,
      false,
    ],
  ];

  it.each(GROUP_FATES)(
    "a restore puts the user back in its group %s, or names the group",
    async (_fate, act, back, named) => {
      const { member, groupId } = await deletedMember(deletes[0][1]);
      await act(groupId);
      const restored = await server.call("POST", `/DeletedUsers/${member.id}/restore`);
      expect(restored.statusCode, restored.body).toBe(200);
      const notBack = back ? [] : [{ id: groupId, ...(named && { displayName: `team of ${member.userName}` }) }];
      expect(restored.json()).toEqual({ id: member.id, userName: member.userName, groupsNotRestored: notBack });
      const groups = ((await server.call("GET", `/Users/${member.id}`)).json() as Any).groups ?? [];
      expect(groups.map((g: Json) => g.value)).toEqual(back ? [groupId] : []);
    },
  );

  it("a purge frees the names for good", async () => {
    const { member } = await deletedMember(deletes[0][1]);
    expect((await server.call("DELETE", `/DeletedUsers/${member.id}`)).statusCode).toBe(204);
    expect((await server.call("DELETE", `/DeletedUsers/${member.id}`)).statusCode).toBe(404);
    expect((await server.call("POST", `/DeletedUsers/${member.id}/restore`)).statusCode).toBe(404);
    const again = await server.call("POST", "/Users", {
      schemas: [USER],
      userName: member.userName,
      externalId: `ext-${member.userName}`,
    });
    expect(again.statusCode, again.body).toBe(201);
    const audit = await server.call("GET", `/audit?filter=${encodeURIComponent('action eq "user.purge"')}`);
    expect(JSON.stringify(audit.json())).toContain(member.id);
  });

  it.each([["support"], ["member"]] as const)("refuses %s the deleted users' routes (403)", async (role) => {
    const { member } = await deletedMember(deletes[0][1]);
    const caller = await user([role]);
    const call = await loggedIn(server.app, caller.userName);
    const requests: [method: "GET" | "POST" | "DELETE", url: string][] = [
      ["GET", "/DeletedUsers"],
      ["POST", `/DeletedUsers/${member.id}/restore`],
      ["DELETE", `/DeletedUsers/${member.id}`],
    ];
    for (const [method, url] of requests) expect((await call(method, url)).statusCode, url).toBe(403);
  });
  it("the wait ends by itself after the days retained", async () => {
    const { member } = await deletedMember(deletes[0][1]);
    now += 7 * DAY_MS - 1;
    // the admin's login of the first day has expired by now
    const admin = await loggedIn(server.app, server.admin.userName, server.admin.password);
    expect(JSON.stringify((await admin("GET", "/DeletedUsers")).json())).toContain(member.id);
    now += 1;
    expect(JSON.stringify((await admin("GET", "/DeletedUsers")).json())).not.toContain(member.id);
    const again = await admin("POST", "/Users", { schemas: [USER], userName: member.userName });
    expect(again.statusCode, again.body).toBe(201);
  });
});

describe.each(STORES)("--retain-deleted 0 on %s", (_store, start) => {
  const server = useTestServer({ retainDeletedDays: 0 }, start);

  it("deletes at once, as before: nothing kept, the name free", async () => {
    const member = await insertUser(server.app, { userName: "at.once", password: USER_PASSWORD, roles: ["member"] });
    expect((await server.call("DELETE", `/Users/${member.id}`)).statusCode).toBe(204);
    expect((await server.call("GET", "/DeletedUsers")).json()).toEqual({ Resources: [] });
    const again = await server.call("POST", "/Users", { schemas: [USER], userName: "at.once" } as Json);
    expect(again.statusCode, again.body).toBe(201);
  });
});
