import { describe, expect, it } from "vitest";
import { STORES } from "../helpers/postgres.js";
import { type Call, insertUser, loggedIn, type TestAdmin, USER_PASSWORD, useTestServer } from "../helpers/server.js";

/**
 * Group deletes that can be undone (spec 1.10, `--retain-deleted`) on both stores, as users'
 * are: a deleted Group answers 404 on /Groups and /Resources, is out of lists and filters, its
 * roles end at once, its names stay reserved; an admin restores it (name, externalId, roles, the
 * members that still exist, naming those gone) or purges it; the wait ends by itself.
 */

type Json = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: a test reads any member of an answer
type Any = any;
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ROLES_EXT = "urn:bizctl:schemas:extension:roles:2.0:Group";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const DAY_MS = 24 * 3600 * 1000;

type DeleteBy = (call: Call, id: string) => Promise<number>;
const DELETES: [path: string, deleteBy: DeleteBy][] = [
  ["DELETE /Groups/{id}", async (call, id) => (await call("DELETE", `/Groups/${id}`)).statusCode],
  ["DELETE /Resources/{id}", async (call, id) => (await call("DELETE", `/Resources/${id}`)).statusCode],
];

describe.each(STORES)("deleted groups on %s", (_store, start) => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const server = useTestServer({ clock: () => new Date(now), retainDeletedDays: 7 }, start);
  let counter = 0;
  const user = (roles: ("admin" | "support" | "member")[] = ["member"]): Promise<TestAdmin> =>
    insertUser(server.app, { userName: `grp.${++counter}`, password: USER_PASSWORD, roles });

  /** A support group with an externalId and these members, one of them logged in; then deleted. */
  async function deletedGroup(deleteBy: DeleteBy = DELETES[0][1], extra = 0) {
    const member = await user();
    const others = await Promise.all(Array.from({ length: extra }, () => user()));
    const session = await loggedIn(server.app, member.userName);
    const name = `Desk ${++counter}`;
    const created = await server.call("POST", "/Groups", {
      schemas: [GROUP, ROLES_EXT],
      displayName: name,
      externalId: `ext-${counter}`,
      members: [member, ...others].map((u) => ({ value: u.id })),
      [ROLES_EXT]: { roles: ["support"] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = (created.json() as Any).id as string;
    // support reads any User: the group's role, at work on the open session
    const readsOthers = async () => (await session("GET", `/Users/${server.admin.id}`)).statusCode === 200;
    expect(await readsOthers()).toBe(true);
    expect(await deleteBy(server.call, id)).toBe(204);
    return { id, name, externalId: `ext-${counter}`, member, others, readsOthers };
  }

  it.each(DELETES)(
    "a Group deleted by %s answers 404, is out of every list, its roles end at once, and it keeps its names",
    async (_path, by) => {
      const { id, name, externalId, member, readsOthers } = await deletedGroup(by);
      expect(await readsOthers()).toBe(false);
      for (const url of [`/Groups/${id}`, `/Resources/${id}`]) {
        expect((await server.call("GET", url)).statusCode, url).toBe(404);
      }
      for (const filter of [`displayName eq "${name}"`, `externalId eq "${externalId}"`]) {
        const q = encodeURIComponent(filter);
        for (const url of [`/Groups?filter=${q}`, `/Resources?resourcetypes=Group&filter=${q}`]) {
          expect((await server.call("GET", url)).json(), url).toMatchObject({ totalResults: 0 });
        }
      }
      expect(JSON.stringify((await server.call("GET", "/Groups?count=1000")).json())).not.toContain(id);
      expect(((await server.call("GET", `/Users/${member.id}`)).json() as Any).groups ?? []).toEqual([]);
      const creates: [url: string, body: Json, path: string][] = [
        ["/Groups", { schemas: [GROUP], displayName: name.toUpperCase() }, "/displayName"],
        ["/Groups", { schemas: [GROUP], displayName: `other ${name}`, externalId }, "/externalId"],
        ["/Resources", { resourceType: "Group", displayName: name }, "/displayName"],
      ];
      for (const [url, body, path] of creates) {
        const taken = await server.call("POST", url, body);
        expect(taken.statusCode, taken.body).toBe(409);
        expect(taken.json()).toMatchObject({ scimType: "uniqueness", errors: [{ path }] });
        expect((taken.json() as Any).detail).toMatch(
          new RegExp(`deleted group \\(${id}\\).*bizctl groups restore ${id}.*bizctl groups purge ${id}`),
        );
      }
      const other = await server.call("POST", "/Groups", { schemas: [GROUP], displayName: `renamed ${name}` });
      const renamed = await server.call("PATCH", `/Groups/${(other.json() as Any).id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", path: "displayName", value: name }],
      });
      expect(renamed.statusCode, renamed.body).toBe(409);
      expect(renamed.json()).toMatchObject({ scimType: "uniqueness" });
      const listed = (await server.call("GET", "/DeletedGroups")).json() as Any;
      expect(listed.Resources).toContainEqual({
        id,
        displayName: name,
        externalId,
        roles: ["support"],
        members: 1,
        deletedAt: new Date(now).toISOString(),
        purgeAfter: new Date(now + 7 * DAY_MS).toISOString(),
      });
    },
  );

  // what becomes of each member by the time the group is restored, and what the restore says of it
  const MEMBERS: [fate: string, act: (id: string) => Promise<void>, back: boolean, named: boolean][] = [
    ["still there", async () => {}, true, false],
    ["deleted and kept", async (userId) => void (await server.call("DELETE", `/Users/${userId}`)), false, true],
    [
      "deleted and purged",
      async (userId) => {
        await server.call("DELETE", `/Users/${userId}`);
        await server.call("DELETE", `/DeletedUsers/${userId}`);
      },
      false,
      false,
    ],
  ];

  it.each(MEMBERS)(
    "a restore brings back the name, externalId, roles and members; a member %s",
    async (_fate, act, back, named) => {
      const { id, name, externalId, member, others, readsOthers } = await deletedGroup(DELETES[0][1], 1);
      const [fated] = others as [TestAdmin];
      await act(fated.id);
      const restored = await server.call("POST", `/DeletedGroups/${id}/restore`);
      expect(restored.statusCode, restored.body).toBe(200);
      expect(restored.json()).toEqual({
        id,
        displayName: name,
        roles: ["support"],
        members: back ? 2 : 1,
        membersNotRestored: back ? [] : [{ id: fated.id, ...(named && { userName: fated.userName }) }],
      });
      expect(await readsOthers()).toBe(true);
      const got = await server.call("GET", `/Groups/${id}`);
      expect(got.statusCode).toBe(200);
      expect(got.json()).toMatchObject({ displayName: name, externalId, [ROLES_EXT]: { roles: ["support"] } });
      const members = ((got.json() as Any).members as Json[]).map((m) => m.value).sort();
      expect(members).toEqual((back ? [member.id, fated.id] : [member.id]).sort());
      expect((await server.call("GET", "/DeletedGroups")).json()).not.toMatchObject({
        Resources: expect.arrayContaining([expect.objectContaining({ id })]),
      });
      expect((await server.call("POST", `/DeletedGroups/${id}/restore`)).statusCode).toBe(404);
      if (named) {
        // the member's own restore then brings this membership back
        const user = await server.call("POST", `/DeletedUsers/${fated.id}/restore`);
        expect(user.json()).toMatchObject({ groupsNotRestored: [] });
        expect(((await server.call("GET", `/Users/${fated.id}`)).json() as Any).groups).toMatchObject([{ value: id }]);
      }
      const audit = await server.call("GET", `/audit?filter=${encodeURIComponent(`target.id eq "${id}"`)}`);
      const actions = JSON.stringify(audit.json());
      for (const action of ["group.delete", "group.restore"]) expect(actions).toContain(action);
      expect(actions).toContain(server.admin.userName);
    },
  );

  it("a user restored while its group is deleted says so, and the group's restore brings the membership back", async () => {
    const { id, name, member } = await deletedGroup();
    expect((await server.call("DELETE", `/Users/${member.id}`)).statusCode).toBe(204);
    // the user was deleted after the group: the group kept it as a member, the user kept no group
    const group = await server.call("POST", `/DeletedGroups/${id}/restore`);
    expect(group.json()).toMatchObject({
      members: 0,
      membersNotRestored: [{ id: member.id, userName: member.userName }],
    });
    expect((await server.call("DELETE", `/Groups/${id}`)).statusCode).toBe(204);
    const user = await server.call("POST", `/DeletedUsers/${member.id}/restore`);
    expect(user.statusCode, user.body).toBe(200);
    expect(user.json()).toMatchObject({ groupsNotRestored: [{ id, displayName: name }] });
    const again = await server.call("POST", `/DeletedGroups/${id}/restore`);
    expect(again.json()).toMatchObject({ members: 1, membersNotRestored: [] });
    expect(((await server.call("GET", `/Users/${member.id}`)).json() as Any).groups).toMatchObject([{ value: id }]);
  });

  it("a purge frees the names for good, audited", async () => {
    const { id, name, externalId } = await deletedGroup();
    expect((await server.call("DELETE", `/DeletedGroups/${id}`)).statusCode).toBe(204);
    expect((await server.call("DELETE", `/DeletedGroups/${id}`)).statusCode).toBe(404);
    expect((await server.call("POST", `/DeletedGroups/${id}/restore`)).statusCode).toBe(404);
    const again = await server.call("POST", "/Groups", { schemas: [GROUP], displayName: name, externalId });
    expect(again.statusCode, again.body).toBe(201);
    const audit = await server.call("GET", `/audit?filter=${encodeURIComponent('action eq "group.purge"')}`);
    expect(JSON.stringify(audit.json())).toContain(id);
  });

  it.each([["support"], ["member"]] as const)("refuses %s the deleted groups' routes (403)", async (role) => {
    const { id } = await deletedGroup();
    const call = await loggedIn(server.app, (await user([role])).userName);
    const requests: [method: "GET" | "POST" | "DELETE", url: string][] = [
      ["GET", "/DeletedGroups"],
      ["POST", `/DeletedGroups/${id}/restore`],
      ["DELETE", `/DeletedGroups/${id}`],
    ];
    for (const [method, url] of requests) expect((await call(method, url)).statusCode, url).toBe(403);
    expect(JSON.stringify((await server.call("GET", "/DeletedGroups")).json())).toContain(id);
  });

  it("the wait ends by itself after the days retained", async () => {
    const { id, name } = await deletedGroup();
    now += 7 * DAY_MS - 1;
    const admin = await loggedIn(server.app, server.admin.userName, server.admin.password);
    expect(JSON.stringify((await admin("GET", "/DeletedGroups")).json())).toContain(id);
    now += 1;
    expect(JSON.stringify((await admin("GET", "/DeletedGroups")).json())).not.toContain(id);
    const again = await admin("POST", "/Groups", { schemas: [GROUP], displayName: name });
    expect(again.statusCode, again.body).toBe(201);
  });
});

describe.each(STORES)("groups under --retain-deleted 0 on %s", (_store, start) => {
  const server = useTestServer({ retainDeletedDays: 0 }, start);

  it("deletes at once, as before: nothing kept, the name free", async () => {
    const created = await server.call("POST", "/Groups", { schemas: [GROUP], displayName: "At Once" });
    expect((await server.call("DELETE", `/Groups/${(created.json() as Any).id}`)).statusCode).toBe(204);
    expect((await server.call("GET", "/DeletedGroups")).json()).toEqual({ Resources: [] });
    const again = await server.call("POST", "/Groups", { schemas: [GROUP], displayName: "At Once" });
    expect(again.statusCode, again.body).toBe(201);
  });
});
