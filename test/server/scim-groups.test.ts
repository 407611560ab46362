import { describe, expect, it } from "vitest";
import { hashPassword } from "../../src/server/services/passwords.js";
import { saveCredential } from "../../src/server/store/users-repo.js";
import { STORES } from "../helpers/postgres.js";
import { type Call, caller, insertUser, loggedIn, type TestAdmin, tryLogin, useTestServer } from "../helpers/server.js";

/**
 * SCIM /Groups (spec 1.9) on both stores: the shapes Entra ID and Okta send, the limits, the
 * roles a group grants as effective roles (at once, on an open session), least privilege and the
 * last-admin guard counting admins by group, and concurrent PATCHes that lose no member.
 */

const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ROLES_EXT = "urn:bizctl:schemas:extension:roles:2.0:Group";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const ACCOUNT_EXT = "urn:bizctl:schemas:extension:account:2.0:User";
type Json = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: a test reads any member of an answer
type Any = any;

const patch = (...Operations: Json[]) => ({ schemas: [PATCH_OP], Operations });

async function createGroup(call: Call, displayName: string, roles: string[] = [], more: Json = {}): Promise<string> {
  const response = await call("POST", "/Groups", {
    schemas: [GROUP, ROLES_EXT],
    displayName,
    members: [],
    [ROLES_EXT]: { roles },
    ...more,
  });
  expect(response.statusCode, response.body).toBe(201);
  return (response.json() as { id: string }).id;
}

const memberIds = async (call: Call, id: string) =>
  ((await call("GET", `/Groups/${id}`)).json() as Any).members?.map((m: Json) => m.value).sort() ?? [];

describe.each(STORES)("/Groups on %s", (_store, start) => {
  const server = useTestServer({}, start);
  let counter = 0;
  const user = (roles: ("admin" | "support" | "member")[] = ["member"]): Promise<TestAdmin> =>
    insertUser(server.app, { userName: `user.${++counter}`, password: "velvet harbour quartz 6620 meadow", roles });

  it("creates, finds by displayName in any case and externalId, and refuses a taken name with 409 uniqueness", async () => {
    const id = await createGroup(server.call, "Sales Team", [], { externalId: "okta-sales" });
    const taken = await server.call("POST", "/Groups", { schemas: [GROUP], displayName: "sales team" });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({ status: "409", scimType: "uniqueness" });
    for (const filter of ['displayName eq "SALES TEAM"', 'externalId eq "okta-sales"']) {
      const list = await server.call("GET", `/Groups?filter=${encodeURIComponent(filter)}&excludedAttributes=members`);
      expect(list.statusCode, list.body).toBe(200);
      expect(list.json()).toMatchObject({ totalResults: 1, Resources: [{ id, displayName: "Sales Team" }] });
      expect((list.json() as Any).Resources[0].members).toBeUndefined();
    }
    const bad = await server.call("GET", `/Groups?filter=${encodeURIComponent('members eq "x"')}`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ scimType: "invalidFilter" });
  });

  it("takes every PATCH shape of Entra ID and Okta, answers 204, and the group when attributes asks", async () => {
    const id = await createGroup(server.call, "Shapes");
    const [a, b, c] = [await user(), await user(), await user()];
    const steps: [body: Json, members: string[]][] = [
      // Entra ID: Add with a list, $ref null
      [
        patch({
          op: "Add",
          path: "members",
          value: [
            { $ref: null, value: a.id },
            { $ref: null, value: b.id },
          ],
        }),
        [a.id, b.id],
      ],
      // Okta: remove by a value filter and add, in one request
      [
        patch(
          { op: "remove", path: `members[value eq "${a.id}"]` },
          { op: "add", path: "members", value: [{ value: c.id, display: "c" }] },
        ),
        [b.id, c.id],
      ],
      // Entra ID: Remove with a list
      [patch({ op: "Remove", path: "members", value: [{ $ref: null, value: b.id }] }), [c.id]],
      // replace of the member list
      [patch({ op: "Replace", path: "members", value: [{ value: a.id }] }), [a.id]],
      // path-less replace of displayName and externalId (Okta sends the id along)
      [patch({ op: "replace", value: { id, displayName: "Shapes Renamed", externalId: "ext-1" } }), [a.id]],
      // Entra ID: Replace displayName by its path
      [patch({ op: "Replace", path: "displayName", value: "Shapes Again" }), [a.id]],
    ];
    for (const [body, members] of steps) {
      const response = await server.call("PATCH", `/Groups/${id}`, body);
      expect(response.statusCode, response.body).toBe(204);
      expect(await memberIds(server.call, id)).toEqual([...members].sort());
    }
    const asked = await server.call(
      "PATCH",
      `/Groups/${id}?attributes=displayName`,
      patch({ op: "add", path: "externalId", value: "ext-2" }),
    );
    expect(asked.statusCode, asked.body).toBe(200);
    expect(asked.json()).toEqual({ schemas: [GROUP], id, displayName: "Shapes Again" });
    const read = (await server.call("GET", `/Groups/${id}`)).json() as Any;
    expect(read).toMatchObject({ displayName: "Shapes Again", externalId: "ext-2", meta: { resourceType: "Group" } });
    expect(read.members[0]).toMatchObject({ value: a.id, display: a.userName, type: "User" });
    expect(read.members[0].$ref).toMatch(new RegExp(`/Users/${a.id}$`));
    const userRead = (await server.call("GET", `/Users/${a.id}`)).json() as Any;
    expect(userRead.groups).toEqual([expect.objectContaining({ value: id, display: "Shapes Again" })]);
  });

  it("refuses an unknown member (400), more than 1,000 member changes (400), and changes nothing", async () => {
    const id = await createGroup(server.call, "Limits");
    const known = await user();
    const unknown = await server.call(
      "PATCH",
      `/Groups/${id}`,
      patch({ op: "add", path: "members", value: [{ value: known.id }, { value: "no-such-user" }] }),
    );
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ status: "400", scimType: "invalidValue" });
    const many = Array.from({ length: 1001 }, (_, i) => ({ value: `id-${i}` }));
    const tooMany = await server.call("PATCH", `/Groups/${id}`, patch({ op: "add", path: "members", value: many }));
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json()).toMatchObject({ status: "400", scimType: "tooMany" });
    expect(await memberIds(server.call, id)).toEqual([]);
  });

  it("replaces the whole group with PUT (Okta), keeping its roles when the request does not name them", async () => {
    const [a, b] = [await user(), await user()];
    const id = await createGroup(server.call, "Put Group", ["support"], { members: [{ value: a.id }] });
    const put = await server.call("PUT", `/Groups/${id}`, {
      schemas: [GROUP],
      id,
      displayName: "Put Group 2",
      members: [{ value: b.id, display: "b" }],
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ displayName: "Put Group 2", [ROLES_EXT]: { roles: ["support"] } });
    expect(await memberIds(server.call, id)).toEqual([b.id]);
  });

  it("grants its roles to its members at once, on a session already open, and takes them back at once", async () => {
    const person = await user(["member"]);
    const session = await loggedIn(server.app, person.userName);
    const readOthers = () => session("GET", `/Users/${server.admin.id}`);
    expect((await readOthers()).statusCode).toBe(404);
    const id = await createGroup(server.call, "Help Desk", ["support"]);
    await server.call("PATCH", `/Groups/${id}`, patch({ op: "add", path: "members", value: [{ value: person.id }] }));
    expect((await readOthers()).statusCode).toBe(200);
    // the account state says where each role comes from
    const state = ((await server.call("GET", `/Users/${person.id}`)).json() as Any)[ACCOUNT_EXT];
    expect(state.roleSources).toEqual([
      { role: "support", source: "Help Desk" },
      { role: "member", source: "direct" },
    ]);
    await server.call(
      "PATCH",
      `/Groups/${id}`,
      patch({ op: "replace", path: `${ROLES_EXT}:roles`, value: ["member"] }),
    );
    expect((await readOthers()).statusCode).toBe(404);
    await server.call(
      "PATCH",
      `/Groups/${id}`,
      patch({ op: "replace", path: `${ROLES_EXT}:roles`, value: ["support"] }),
    );
    expect((await readOthers()).statusCode).toBe(200);
    expect((await server.call("DELETE", `/Groups/${id}`)).statusCode).toBe(204);
    expect((await readOthers()).statusCode).toBe(404);
  });

  it("voids what support issued when a group makes its User privileged; an API token loses a group's role at once", async () => {
    const person = await user(["member"]);
    const temporary = "ochre violin summit 4478 tundra";
    await saveCredential(
      server.app.services.store.db,
      person.id,
      { passwordHash: await hashPassword(temporary), firstLogin: true, issuerRole: "support" },
      new Date(),
    );
    const id = await createGroup(server.call, "Promoted", ["admin"]);
    await server.call("PATCH", `/Groups/${id}`, patch({ op: "add", path: "members", value: [{ value: person.id }] }));
    const login = await tryLogin(server.app, person.userName, temporary);
    expect(login.statusCode).toBe(401);
    expect(login.body).toMatch(/set by support staff/);
    // the tests after this one count the admins: this one goes
    expect((await server.call("DELETE", `/Groups/${id}`)).statusCode).toBe(204);
    // an API token of a member of a support group: it reads other Users until the membership goes
    const owner = await user(["member"]);
    const ownerCall = await loggedIn(server.app, owner.userName);
    const desk = await createGroup(server.call, "Token Desk", ["support"], { members: [{ value: owner.id }] });
    const created = await ownerCall("POST", "/auth/tokens", { name: "script", scopes: ["resources:read"] });
    expect(created.statusCode, created.body).toBe(201);
    const token = caller(server.app, (created.json() as { token: string }).token);
    expect((await token("GET", `/Users/${server.admin.id}`)).statusCode).toBe(200);
    await server.call("PATCH", `/Groups/${desk}`, patch({ op: "remove", path: `members[value eq "${owner.id}"]` }));
    expect((await token("GET", `/Users/${server.admin.id}`)).statusCode).toBe(404);
  });

  it("keeps support off a User who is privileged by a group alone (least privilege on effective roles)", async () => {
    const staff = await user(["support"]);
    const support = await loggedIn(server.app, staff.userName);
    const target = await user(["member"]);
    const setPassword = () =>
      support(
        "PATCH",
        `/Users/${target.id}`,
        patch({ op: "replace", path: "password", value: "amber falcon ridge 5521 willow" }),
      );
    const id = await createGroup(server.call, "Privileged", ["support"], { members: [{ value: target.id }] });
    expect((await setPassword()).json()).toMatchObject({ status: "403", code: "forbidden" });
    await server.call("PATCH", `/Groups/${id}`, patch({ op: "remove", path: `members[value eq "${target.id}"]` }));
    expect((await setPassword()).statusCode).toBe(200);
  });

  it("lets support change the members of an ordinary group only, and never its roles", async () => {
    const staff = await user(["support"]);
    const support = await loggedIn(server.app, staff.userName);
    const someone = await user();
    const plain = await createGroup(server.call, "Plain", ["member"]);
    const admins = await createGroup(server.call, "Admins Of Something", ["admin"]);
    const add = (id: string) =>
      support("PATCH", `/Groups/${id}`, patch({ op: "add", path: "members", value: [{ value: someone.id }] }));
    expect((await add(plain)).statusCode).toBe(204);
    expect((await add(admins)).json()).toMatchObject({ status: "403", code: "forbidden" });
    expect(await memberIds(server.call, admins)).toEqual([]);
    const promote = await support(
      "PATCH",
      `/Groups/${plain}`,
      patch({ op: "replace", path: `${ROLES_EXT}:roles`, value: ["admin"] }),
    );
    expect(promote.json()).toMatchObject({ status: "403", code: "forbidden" });
    expect((await support("DELETE", `/Groups/${plain}`)).json()).toMatchObject({ status: "403", code: "forbidden" });
  });

  it("counts admins by group: the last admin's membership, its group's role and the group itself stay", async () => {
    const keeper = await user(["member"]);
    const id = await createGroup(server.call, "Root", ["admin"], { members: [{ value: keeper.id }] });
    const asKeeper = await loggedIn(server.app, keeper.userName);
    // the keeper is an admin by the group alone: it demotes the first admin, and is then the last one
    const first = (await asKeeper("GET", `/Users/${server.admin.id}`)).json() as Any;
    const demote = await asKeeper("PUT", `/Users/${server.admin.id}`, { ...first, roles: [{ value: "member" }] });
    expect(demote.statusCode, demote.body).toBe(200);
    const refusals = [
      asKeeper("PATCH", `/Groups/${id}`, patch({ op: "remove", path: `members[value eq "${keeper.id}"]` })),
      asKeeper("PATCH", `/Groups/${id}`, patch({ op: "replace", path: `${ROLES_EXT}:roles`, value: ["member"] })),
      asKeeper("PUT", `/Groups/${id}`, { schemas: [GROUP], displayName: "Root", members: [] }),
      asKeeper("DELETE", `/Groups/${id}`),
    ];
    for (const refusal of refusals) expect((await refusal).json()).toMatchObject({ status: "409", code: "last_admin" });
    expect(await memberIds(asKeeper, id)).toEqual([keeper.id]);
    // disabling the admin-by-group is refused too
    const self = (await asKeeper("GET", `/Users/${keeper.id}`)).json() as Any;
    const disable = await asKeeper("PUT", `/Users/${keeper.id}`, { ...self, active: false });
    expect(disable.json()).toMatchObject({ status: "409", code: "last_admin" });
    // give the first admin its role back, for the tests after this one
    const back = await asKeeper("PUT", `/Users/${server.admin.id}`, { ...first, roles: [{ value: "admin" }] });
    expect(back.statusCode, back.body).toBe(200);
  });

  it("loses no member when PATCHes of one group run at once", async () => {
    const id = await createGroup(server.call, "Concurrent");
    const users = await Promise.all(Array.from({ length: 40 }, () => user()));
    const batches = Array.from({ length: 8 }, (_, i) => users.slice(i * 5, i * 5 + 5));
    const answers = await Promise.all(
      batches.map((batch) =>
        server.call(
          "PATCH",
          `/Groups/${id}`,
          patch({ op: "add", path: "members", value: batch.map((u) => ({ value: u.id })) }),
        ),
      ),
    );
    for (const answer of answers) expect(answer.statusCode, answer.body).toBe(204);
    expect(await memberIds(server.call, id)).toEqual(users.map((u) => u.id).sort());
  });

  it("lists Group in /ResourceTypes and /Schemas, and groups as readOnly on the User", async () => {
    const types = (await server.call("GET", "/ResourceTypes/Group")).json() as Any;
    expect(types).toMatchObject({ id: "Group", endpoint: "/Groups", schema: GROUP });
    expect((await server.call("GET", `/Schemas/${GROUP}`)).statusCode).toBe(200);
    expect((await server.call("GET", `/Schemas/${ROLES_EXT}`)).statusCode).toBe(200);
    const userSchema = (await server.call("GET", "/Schemas/urn:ietf:params:scim:schemas:core:2.0:User")).json() as Any;
    expect(userSchema.attributes.find((a: Json) => a.name === "groups")).toMatchObject({ mutability: "readOnly" });
  });
});
