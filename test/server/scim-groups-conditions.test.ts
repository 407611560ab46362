import { describe, expect, it } from "vitest";
import { STORES } from "../helpers/postgres.js";
import { type Call, insertUser, loggedIn, useTestServer } from "../helpers/server.js";

/**
 * /Groups on both stores: the ETag every answer carries and the If-Match every write honours (as
 * /Users do), and each refused change of a group recorded in the audit trail with who asked.
 */

const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ROLES_EXT = "urn:bizctl:schemas:extension:roles:2.0:Group";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
type Json = Record<string, unknown>;

const patch = (...Operations: Json[]) => ({ schemas: [PATCH_OP], Operations });
const rename = (displayName: string) => patch({ op: "replace", value: { displayName } });

describe.each(STORES)("/Groups conditions on %s", (_store, start) => {
  const server = useTestServer({}, start);
  let counter = 0;

  async function newGroup(roles: string[] = []): Promise<{ id: string; etag: string }> {
    const created = await server.call("POST", "/Groups", {
      schemas: [GROUP, ROLES_EXT],
      displayName: `Conditions ${++counter}`,
      [ROLES_EXT]: { roles },
    });
    expect(created.statusCode, created.body).toBe(201);
    const body = created.json() as { id: string; meta: { version: string } };
    expect(created.headers.etag).toBe(body.meta.version);
    return { id: body.id, etag: String(created.headers.etag) };
  }

  it("answers every read and write with the group's ETag, and a read naming it with 304", async () => {
    const { id, etag } = await newGroup();
    const read = await server.call("GET", `/Groups/${id}`);
    expect(read.headers.etag).toBe(etag);
    expect((await server.call("GET", `/Groups/${id}`, undefined, { "if-none-match": etag })).statusCode).toBe(304);
    const patched = await server.call("PATCH", `/Groups/${id}`, rename(`Renamed ${counter}`));
    expect(patched.statusCode).toBe(204);
    expect(patched.headers.etag).toBeDefined();
    expect(patched.headers.etag).not.toBe(etag);
    const after = await server.call("GET", `/Groups/${id}`);
    expect(after.headers.etag).toBe(patched.headers.etag);
    expect((after.json() as { meta: { version: string } }).meta.version).toBe(patched.headers.etag);
    const replaced = await server.call("PUT", `/Groups/${id}`, { schemas: [GROUP], displayName: `Put ${counter}` });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.headers.etag).toBe((replaced.json() as { meta: { version: string } }).meta.version);
  });

  type Write = (id: string, headers: Record<string, string>) => ReturnType<Call>;
  const writes: [name: string, write: Write, status: number][] = [
    ["PATCH", (id, headers) => server.call("PATCH", `/Groups/${id}`, rename(`P ${++counter}`), headers), 204],
    [
      "PUT",
      (id, headers) =>
        server.call("PUT", `/Groups/${id}`, { schemas: [GROUP], displayName: `U ${++counter}` }, headers),
      200,
    ],
    ["DELETE", (id, headers) => server.call("DELETE", `/Groups/${id}`, undefined, headers), 204],
  ];

  it.each(writes)(
    "%s honours If-Match: 412 and nothing changed on a stale ETag, done on the current one",
    async (_name, write, status) => {
      const { id, etag } = await newGroup();
      const moved = await server.call("PATCH", `/Groups/${id}`, rename(`Moved ${++counter}`));
      const stale = await write(id, { "if-match": etag });
      expect(stale.statusCode, stale.body).toBe(412);
      expect(stale.json()).toMatchObject({ code: "precondition_failed" });
      const unchanged = await server.call("GET", `/Groups/${id}`);
      expect(unchanged.headers.etag).toBe(moved.headers.etag);
      const current = await write(id, { "if-match": String(moved.headers.etag) });
      expect(current.statusCode, current.body).toBe(status);
    },
  );

  // a create or delete by support is refused at the route, as every admin-only operation is, before any group is read
  it("records each refused change of a group's members or roles with the one who asked", async () => {
    const staff = await insertUser(server.app, {
      userName: `support.${++counter}`,
      password: "velvet harbour quartz 6620 meadow",
      roles: ["support"],
    });
    const support = await loggedIn(server.app, staff.userName);
    const admins = await newGroup(["admin"]);
    const plain = await newGroup(["member"]);
    const refused: [action: string, target: string, request: () => ReturnType<Call>][] = [
      [
        "group.members",
        admins.id,
        () =>
          support("PATCH", `/Groups/${admins.id}`, patch({ op: "add", path: "members", value: [{ value: staff.id }] })),
      ],
      [
        "group.roles",
        plain.id,
        () =>
          support(
            "PATCH",
            `/Groups/${plain.id}`,
            patch({ op: "replace", path: `${ROLES_EXT}:roles`, value: ["admin"] }),
          ),
      ],
    ];
    for (const [action, target, request] of refused) {
      const answer = await request();
      expect(answer.statusCode, answer.body).toBe(403);
      const filter = `action eq "${action}" and outcome eq "forbidden" and actor.id eq "${staff.id}"`;
      const found = (await server.call("GET", `/audit?filter=${encodeURIComponent(filter)}`)).json() as {
        data: { target?: { type?: string; id?: string; name?: string } }[];
      };
      expect(found.data, action).toHaveLength(1);
      expect(found.data[0]?.target).toMatchObject({ type: "Group", id: target });
    }
  });
});
