import { describe, expect, it } from "vitest";
import { STORES } from "../helpers/postgres.js";
import { insertUser, loggedIn, useTestServer } from "../helpers/server.js";

/**
 * Groups are also /Resources of type Group (spec 1.9), on both stores: created, listed (that type
 * alone), read, replaced, patched and deleted there as through /Groups, under the same rules, and
 * the same group seen from both paths.
 */

const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
type Json = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: a test reads any member of an answer
type Any = any;

describe.each(STORES)("Groups as /Resources on %s", (_store, start) => {
  const server = useTestServer({}, start);
  let counter = 0;
  const member = () =>
    insertUser(server.app, {
      userName: `rg.${++counter}`,
      password: "velvet harbour quartz 6620 meadow",
      roles: ["member"],
    });

  async function created(body: Json) {
    const answer = await server.call("POST", "/Resources", body);
    expect(answer.statusCode, answer.body).toBe(201);
    return answer;
  }

  it("creates a Group by its resourceType or its schema, the same group /Groups shows", async () => {
    const someone = await member();
    for (const body of [
      { resourceType: "Group", displayName: `By type ${++counter}`, members: [{ value: someone.id }] },
      { schemas: [GROUP], displayName: `By schema ${++counter}`, members: [{ value: someone.id }] },
    ]) {
      const answer = await created(body);
      const group = answer.json() as Any;
      expect(group).toMatchObject({
        resourceType: "Group",
        displayName: body.displayName,
        members: [{ value: someone.id }],
      });
      expect(answer.headers.location).toBe(`/Resources/${group.id}`);
      expect(answer.headers.etag).toBe(group.meta.version);
      const same = (await server.call("GET", `/Groups/${group.id}`)).json() as Any;
      expect(same).toMatchObject({ id: group.id, displayName: body.displayName, members: [{ value: someone.id }] });
    }
  });

  it("reads, patches, replaces and deletes a group by its id, honouring If-Match", async () => {
    const someone = await member();
    const group = (await created({ resourceType: "Group", displayName: `Life ${++counter}` })).json() as Any;
    const read = await server.call("GET", `/Resources/${group.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ id: group.id, resourceType: "Group" });
    expect((await server.call("GET", `/Resources/${group.id}?resourcetypes=User`)).statusCode).toBe(404);
    const patched = await server.call("PATCH", `/Resources/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "add", path: "members", value: [{ value: someone.id }] }],
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ resourceType: "Group", members: [{ value: someone.id }] });
    expect(patched.headers.etag).toBe((patched.json() as Any).meta.version);
    const stale = await server.call(
      "PUT",
      `/Resources/${group.id}`,
      { resourceType: "Group", displayName: "Stale" },
      { "if-match": String(read.headers.etag) },
    );
    expect(stale.statusCode).toBe(412);
    const replaced = await server.call("PUT", `/Resources/${group.id}`, {
      resourceType: "Group",
      displayName: `Renamed ${counter}`,
    });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.json()).toMatchObject({ displayName: `Renamed ${counter}`, resourceType: "Group" });
    expect((replaced.json() as Any).members ?? []).toEqual([]); // PUT replaces the members too
    expect((await server.call("DELETE", `/Resources/${group.id}`)).statusCode).toBe(204);
    expect((await server.call("GET", `/Groups/${group.id}`)).statusCode).toBe(404);
    expect((await server.call("GET", `/Resources/${group.id}`)).statusCode).toBe(404);
  });

  it("lists Groups of that type alone, filtered as /Groups filters them, and refuses what it cannot do", async () => {
    const name = `Listed ${++counter}`;
    const group = (
      await created({ resourceType: "Group", displayName: name, externalId: `ext-${counter}` })
    ).json() as Any;
    const filter = encodeURIComponent(`externalId eq "ext-${counter}"`);
    const list = await server.call("GET", `/Resources?resourcetypes=Group&filter=${filter}`);
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json()).toMatchObject({ totalResults: 1, Resources: [{ id: group.id, resourceType: "Group" }] });
    const users = (await server.call("GET", "/Resources?resourcetypes=User&count=500")).json() as Any;
    expect(users.Resources.map((one: Any) => one.id)).not.toContain(group.id);
    const refusals: [query: string, pointer: string][] = [
      ["resourcetypes=User,Group", "resourcetypes"],
      ["resourcetypes=Group&sortBy=externalId", "sortby"],
      ["resourcetypes=Group&sortOrder=descending", "sortby"],
      [`resourcetypes=Group&filter=${encodeURIComponent('members eq "x"')}`, "filter"],
    ];
    for (const [query, pointer] of refusals) {
      const refused = await server.call("GET", `/Resources?${query}`);
      expect(refused.statusCode, query).toBe(400);
      expect(JSON.stringify(refused.json()), query).toContain(pointer);
    }
  });

  it("holds the groups' rules: a member may not read one, support may not create one", async () => {
    const group = (await created({ resourceType: "Group", displayName: `Rules ${++counter}` })).json() as Any;
    const someone = await member();
    const asMember = await loggedIn(server.app, someone.userName);
    expect((await asMember("GET", `/Resources/${group.id}`)).statusCode).toBe(403);
    expect((await asMember("GET", "/Resources?resourcetypes=Group")).statusCode).toBe(403);
    const staff = await insertUser(server.app, {
      userName: `rg.support.${counter}`,
      password: "velvet harbour quartz 6620 meadow",
      roles: ["support"],
    });
    const support = await loggedIn(server.app, staff.userName);
    const refused = await support("POST", "/Resources", { resourceType: "Group", displayName: "Not by support" });
    expect(refused.statusCode).toBe(403);
    expect((await support("GET", `/Resources/${group.id}`)).statusCode).toBe(200);
  });
});
