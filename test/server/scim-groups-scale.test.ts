import { describe, expect, it } from "vitest";
import { STORES } from "../helpers/postgres.js";
import { useTestServer } from "../helpers/server.js";

/**
 * A large group on both stores (spec 1.9, issue 43's scale): 5,000 members built in PATCHes of
 * 1,000 adds, every member kept; a read without members answers without them; a membership
 * change of a user in many groups. Timings are `npm run bench`'s; this checks the behaviour.
 */

const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const MEMBERS = 5000;

describe.each(STORES)("a large group on %s", (_store, start) => {
  const server = useTestServer({}, start);

  it(`takes ${MEMBERS} members in PATCHes of 1,000 adds and reads without them`, async () => {
    const now = new Date().toISOString();
    const ids = Array.from({ length: MEMBERS }, () => crypto.randomUUID());
    const db = server.app.services.store.db;
    for (let i = 0; i < ids.length; i += 500) {
      await db
        .insertInto("resources")
        .values(
          ids.slice(i, i + 500).map((id, j) => ({
            id,
            resource_type: "User",
            external_id: null,
            display_name: null,
            user_name_key: `scale.${i + j}`,
            attributes: JSON.stringify({ userName: `scale.${i + j}`, roles: [{ value: "member" }] }),
            created_at: now,
            updated_at: now,
            version: 1,
          })),
        )
        .execute();
    }
    const created = await server.call("POST", "/Groups", { displayName: "Everyone", members: [] });
    expect(created.statusCode, created.body).toBe(201);
    const group = (created.json() as { id: string }).id;
    for (let i = 0; i < ids.length; i += 1000) {
      const value = ids.slice(i, i + 1000).map((id) => ({ $ref: null, value: id }));
      const answer = await server.call("PATCH", `/Groups/${group}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "Add", path: "members", value }],
      });
      expect(answer.statusCode, answer.body).toBe(204);
    }
    const slim = await server.call("GET", `/Groups/${group}?excludedAttributes=members`);
    expect(slim.json()).not.toHaveProperty("members");
    const whole = (await server.call("GET", `/Groups/${group}`)).json() as { members: { value: string }[] };
    expect(whole.members).toHaveLength(MEMBERS);
    // one user in 50 groups: adding it to one more and reading its groups
    const someone = ids[0] as string;
    for (let i = 0; i < 50; i++) {
      const answer = await server.call("POST", "/Groups", { displayName: `Team ${i}`, members: [{ value: someone }] });
      expect(answer.statusCode, answer.body).toBe(201);
    }
    const user = (await server.call("GET", `/Users/${someone}?attributes=groups`)).json() as { groups: unknown[] };
    expect(user.groups).toHaveLength(51);
  }, 120_000);
});
