/**
 * The RFCs' own Users on /Users, over a real socket, on SQLite and PostgreSQL: the
 * representations of RFC 7643 section 8 posted as they are printed, and the requests of RFC 7644
 * section 3 (create, replace, attributes), each answered as the RFC shows, but for the server's
 * own id, meta and defaults.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  CREATE_REQUEST,
  ENTERPRISE_USER,
  FULL_USER,
  MINIMAL_USER,
  REPLACE_REQUEST,
} from "../fixtures/scim-rfc-examples.js";
import {
  DATABASES,
  ENTERPRISE_SCHEMA,
  PATCH_OP,
  scimErrorOf,
  startScimServer,
  USER_SCHEMA,
  useScimServer,
} from "../helpers/scim.js";

type Json = Record<string, unknown>;

/** What a server keeps of a posted User: not its read-only members, and never its password. */
function kept(sent: Json): Json {
  const { id: _id, meta: _meta, groups: _groups, password: _password, schemas: _schemas, ...rest } = sent;
  return rest;
}

const STRONG_PASSWORD = "a long passphrase nobody has used 1991";

/** [section, what is posted, the status, what the answer holds] */
const CREATES: [string, Json, number, (answer: Json) => void][] = [
  [
    "RFC 7643 section 8.1, the minimal User",
    MINIMAL_USER,
    201,
    (user) =>
      expect(user).toMatchObject({ schemas: expect.arrayContaining([USER_SCHEMA]), userName: "bjensen@example.com" }),
  ],
  [
    "RFC 7643 section 8.2, the full User without its password",
    (({ password: _p, ...rest }) => rest)(FULL_USER),
    201,
    (user) => expect(user).toMatchObject(kept(FULL_USER)),
  ],
  [
    "RFC 7643 section 8.3, the enterprise User without its password: the extension nested as sent",
    (({ password: _p, ...rest }) => rest)(ENTERPRISE_USER),
    201,
    (user) => {
      expect(user).toMatchObject(kept(ENTERPRISE_USER));
      expect(user.schemas).toEqual(expect.arrayContaining([USER_SCHEMA, ENTERPRISE_SCHEMA]));
    },
  ],
  [
    "RFC 7643 section 8.3 with a password the policy accepts: a temporary one",
    { ...ENTERPRISE_USER, password: STRONG_PASSWORD },
    201,
    (user) => {
      expect(user).toMatchObject(kept(ENTERPRISE_USER));
      expect(JSON.stringify(user)).not.toContain(STRONG_PASSWORD);
      expect(user["urn:bizctl:schemas:extension:account:2.0:User"]).toMatchObject({ firstLogin: true });
    },
  ],
  [
    "RFC 7644 section 3.3, the create request",
    CREATE_REQUEST,
    201,
    (user) => expect(user).toMatchObject({ ...kept(CREATE_REQUEST), meta: { resourceType: "User" } }),
  ],
];

describe.each(DATABASES)("the RFCs' Users on /Users ($name)", ({ start }) => {
  // each case creates the RFCs' bjensen again after deleting it: nothing kept to hold the name
  const scim = useScimServer(start, { retainDeletedDays: 0 });

  it.each(CREATES)("POST %s", async (_what, body, status, holds) => {
    const answer = await scim.call("POST", "/Users", body);
    expect(answer.status, answer.text).toBe(status);
    const user = answer.json();
    holds(user);
    // the server's own id and meta, not the ones sent
    expect(user.id).not.toBe((body as { id?: string }).id);
    expect(user.meta).toMatchObject({
      resourceType: "User",
      location: `/Users/${user.id}`,
      version: answer.headers.etag,
    });
    // the same record under /Resources, the enterprise attributes at its top level
    const resource = (await scim.call("GET", `/Resources/${user.id}`)).json();
    expect(resource.userName).toBe(user.userName);
    if (user[ENTERPRISE_SCHEMA]) expect(resource.department).toBe(user[ENTERPRISE_SCHEMA].department);
    expect((await scim.call("DELETE", `/Users/${user.id}`)).status).toBe(204);
  });

  it("RFC 7643 section 8.2 as printed: its password is refused by the password policy, nothing is created", async () => {
    const error = scimErrorOf(await scim.call("POST", "/Users", FULL_USER), 400);
    expect(error.code).toBe("weak_password");
    const found = await scim.call("GET", `/Users?filter=${encodeURIComponent('userName eq "bjensen@example.com"')}`);
    expect(found.json().totalResults).toBe(0);
  });

  it.each([
    ["8.2", FULL_USER],
    ["8.3", ENTERPRISE_USER],
  ])(
    "RFC 7643 section %s as printed, on a server whose policy takes 11 characters: accepted, its password temporary",
    async (_section, user) => {
      const lenient = await startScimServer(start, { passwordMinLength: 11, retainDeletedDays: 0 });
      try {
        const answer = await lenient.call("POST", "/Users", user);
        expect(answer.status, answer.text).toBe(201);
        const created = answer.json();
        expect(created).toMatchObject(kept(user));
        expect(answer.text).not.toContain("t1meMa$heen");
        expect(created["urn:bizctl:schemas:extension:account:2.0:User"]).toMatchObject({ firstLogin: true });
      } finally {
        await lenient.close();
      }
    },
  );

  it("RFC 7644 section 3.7: a bulk POST to /Users takes the User as POST /Users does; PATCH and DELETE follow", async () => {
    const { password: _p, ...user } = ENTERPRISE_USER;
    const answer = await scim.call("POST", "/Bulk", {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],
      Operations: [{ method: "POST", path: "/Users", bulkId: "qwerty", data: user }],
    });
    expect(answer.status, answer.text).toBe(200);
    const [result] = answer.json().Operations;
    expect(result).toMatchObject({ method: "POST", bulkId: "qwerty", status: "201" });
    expect(result.location).toMatch(/^\/Users\/[0-9a-f-]{36}$/);
    expect((await scim.call("GET", result.location)).json()).toMatchObject(kept(ENTERPRISE_USER));
    const changed = await scim.call("POST", "/Bulk", {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],
      Operations: [
        {
          method: "PATCH",
          path: result.location,
          version: result.version,
          data: { schemas: [PATCH_OP], Operations: [{ op: "Replace", path: "active", value: "False" }] },
        },
        { method: "PATCH", path: result.location, data: { Operations: [] } },
      ],
    });
    const [patched, refused] = changed.json().Operations;
    expect(patched).toMatchObject({ method: "PATCH", status: "200", location: result.location });
    expect(refused).toMatchObject({ status: "400", response: { scimType: "invalidSyntax" } });
    expect((await scim.call("GET", result.location)).json().active).toBe(false);
    const removed = await scim.call("POST", "/Bulk", {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],
      Operations: [{ method: "DELETE", path: result.location, version: patched.version }],
    });
    expect(removed.json().Operations[0]).toMatchObject({ status: "204", location: result.location });
  });

  describe("RFC 7644 section 3: create, replace, read parts", () => {
    let id: string;
    let etag: string;
    beforeAll(async () => {
      const created = await scim.call("POST", "/Users", CREATE_REQUEST);
      expect(created.status, created.text).toBe(201);
      id = created.json().id;
      etag = String(created.headers.etag);
    });

    it("section 3.5.1: PUT replaces the User as the RFC's answer shows; a stale If-Match is 412", async () => {
      const stale = await scim.call("PUT", `/Users/${id}`, REPLACE_REQUEST, { "if-match": '"0"' });
      expect(scimErrorOf(stale, 412).code).toBe("precondition_failed");
      const answer = await scim.call("PUT", `/Users/${id}`, REPLACE_REQUEST, { "if-match": etag });
      expect(answer.status, answer.text).toBe(200);
      const { roles: _roles, ...asShown } = kept(REPLACE_REQUEST);
      expect(answer.json()).toMatchObject({ ...asShown, id, meta: { resourceType: "User", location: `/Users/${id}` } });
      expect(answer.headers.etag).not.toBe(etag);
    });

    it("section 3.9: attributes=userName answers the id, the schemas and the userName", async () => {
      const answer = await scim.call("GET", `/Users/${id}?attributes=userName`);
      expect(answer.json()).toEqual({ schemas: [USER_SCHEMA], id, userName: "bjensen" });
    });

    it.each([
      [
        "attributes=name.givenName,emails.value",
        { name: { givenName: "Barbara" }, emails: [{ value: "bjensen@example.com" }, { value: "babs@jensen.org" }] },
      ],
      ["attributes=urn:ietf:params:scim:schemas:core:2.0:User:userName", { userName: "bjensen" }],
      [
        "excludedAttributes=emails,meta,name,roles,active,urn:bizctl:schemas:extension:account:2.0:User",
        { userName: "bjensen", externalId: "bjensen", displayName: undefined },
      ],
    ])("section 3.4.2.5: %s", async (query, expected) => {
      const answer = await scim.call("GET", `/Users/${id}?${query}`);
      expect(answer.status, answer.text).toBe(200);
      const { displayName: _d, ...want } = expected as Json;
      expect(answer.json()).toEqual({ schemas: expect.any(Array), id, ...want });
    });

    it("section 3.4.2: a filtered list with attributes=userName", async () => {
      const answer = await scim.call(
        "GET",
        `/Users?attributes=userName&filter=${encodeURIComponent('userName sw "bj"')}`,
      );
      expect(answer.json()).toMatchObject({
        totalResults: 1,
        Resources: [{ schemas: [USER_SCHEMA], id, userName: "bjensen" }],
      });
      expect(Object.keys(answer.json().Resources[0]).sort()).toEqual(["id", "schemas", "userName"]);
    });
  });
});
