/**
 * User names are compared in Unicode NFC, lower-cased (RFC 8265's UsernameCaseMapped), on every
 * path that writes or looks one up, and hold no control or invisible format character: `josé`
 * precomposed and decomposed are one name, `admin` with a zero-width space is refused.
 */
import { sql } from "kysely";
import { describe, expect, it, vi } from "vitest";
import { migrateTo, migrateToLatest } from "../../src/server/store/migrator.js";
import { STORES } from "../helpers/postgres.js";
import { createResource, type InjectResponse, type ProblemBody, tryLogin, useTestServer } from "../helpers/server.js";
import { useStoreToMigrate } from "../helpers/store-to-migrate.js";

const USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User";
const PATCH_URN = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const BULK_URN = "urn:ietf:params:scim:api:messages:2.0:BulkRequest";
const PASSWORD = "violet staple engine 7734 quarry";
const PRECOMPOSED = "jos\u00e9";
const DECOMPOSED = "jose\u0301";

/** A problem answer, as /Resources (problem+json) and the SCIM endpoints (scim+json) write it. */
function problemOf(response: InjectResponse, status: number, code: string): ProblemBody {
  expect(response.statusCode, response.body).toBe(status);
  const body = response.json() as ProblemBody;
  expect(body.code).toBe(code);
  return body;
}

describe.each(STORES)("user names in Unicode (%s)", (_store, start) => {
  const server = useTestServer({}, start);
  const call = server.call;

  it("stores a decomposed name in NFC, finds it by either form in filters and at the login", async () => {
    const user = await createResource(call, {
      resourceType: "User",
      userName: `Ren${DECOMPOSED}e`,
      password: PASSWORD,
    });
    expect(user.userName).toBe(`Ren${PRECOMPOSED}e`);
    for (const form of [`ren${DECOMPOSED}e`, `REN${PRECOMPOSED.toUpperCase()}E`]) {
      const filter = encodeURIComponent(`userName eq "${form}"`);
      for (const list of [`/Users?filter=${filter}`, `/Resources?filter=${filter}`]) {
        expect((await call("GET", list)).json().totalResults, `${list}`).toBe(1);
      }
      expect((await tryLogin(server.app, form, PASSWORD)).statusCode).toBe(200);
    }
  });

  it.each([
    ["POST /Resources", "POST", "/Resources", (name: string) => ({ resourceType: "User", userName: name })],
    ["POST /Users", "POST", "/Users", (name: string) => ({ schemas: [USER_URN], userName: name })],
  ] as const)("refuses on %s the other form of a name taken (409 uniqueness)", async (_label, method, url, body) => {
    const taken = `${PRECOMPOSED}.${url.slice(1).toLowerCase()}`;
    await createResource(call, { resourceType: "User", userName: taken });
    const clash = await call(method, url, body(taken.normalize("NFD").toUpperCase()));
    expect(problemOf(clash, 409, "conflict").scimType).toBe("uniqueness");
  });

  it("refuses the other form on PUT, PATCH and /Bulk", async () => {
    await createResource(call, { resourceType: "User", userName: `${PRECOMPOSED}.taken` });
    const other = await createResource(call, { resourceType: "User", userName: "someone.renamed" });
    const name = `${DECOMPOSED}.taken`;
    const put = await call("PUT", `/Resources/${other.id}`, { ...other, userName: name });
    expect(problemOf(put, 409, "conflict").scimType).toBe("uniqueness");
    const patch = await call("PATCH", `/Users/${other.id}`, {
      schemas: [PATCH_URN],
      Operations: [{ op: "replace", path: "userName", value: name }],
    });
    expect(problemOf(patch, 409, "conflict").scimType).toBe("uniqueness");
    const bulk = await call("POST", "/Bulk", {
      schemas: [BULK_URN],
      Operations: [{ method: "POST", path: "/Users", bulkId: "b1", data: { schemas: [USER_URN], userName: name } }],
    });
    expect(bulk.statusCode, bulk.body).toBe(200);
    expect(bulk.json().Operations[0].status).toBe("409");
    expect((await call("GET", `/Resources/${other.id}`)).json().userName).toBe("someone.renamed");
  });

  it.each([
    ["a zero-width space", "admin\u200b", "U+200B"],
    ["a zero-width joiner", "ad\u200dmin", "U+200D"],
    ["a byte order mark", "\ufeffadmin", "U+FEFF"],
    ["a left-to-right mark", "admin\u200e", "U+200E"],
    ["a soft hyphen", "ad\u00admin", "U+00AD"],
    ["a bidi isolate", "\u2066admin", "U+2066"],
    ["a tag character", "admin\u{e0041}", "U+E0041"],
    ["ESC", "admin\u001b", "U+001B"],
  ])(
    "refuses a userName holding %s with 400 validation_failed naming it, on POST and PATCH",
    async (_what, userName, codePoint) => {
      const created = await call("POST", "/Resources", { resourceType: "User", userName });
      const problem = problemOf(created, 400, "validation_failed");
      expect(problem.errors).toEqual([{ path: "/userName", message: expect.stringContaining(codePoint) }]);
      const user = await createResource(call, { resourceType: "User", userName: `patched.${codePoint}` });
      const patch = await call("PATCH", `/Users/${user.id}`, {
        schemas: [PATCH_URN],
        Operations: [{ op: "replace", path: "userName", value: userName }],
      });
      expect(problemOf(patch, 400, "validation_failed").detail ?? "").not.toContain(userName);
    },
  );
});

describe.each(["sqlite", "postgres"] as const)("migration 0035 on %s", (dialect) => {
  const openStore = useStoreToMigrate(dialect);

  it("puts decomposed names in NFC, and keeps (and names) a User whose name would collide, without failing", async () => {
    const store = await openStore();
    await migrateTo(store.db, dialect, "0034_events_ties_follow_order");
    const insert = async (id: string, userName: string) => {
      await sql`insert into resources (id, resource_type, user_name_key, attributes, created_at, updated_at, version)
        values (${id}, 'User', ${userName.toLowerCase()}, ${JSON.stringify({ userName })}, '2026-01-01', '2026-01-01', 1)`.execute(
        store.db,
      );
      await sql`insert into resource_values (resource_id, path, elem, kind, text_value)
        values (${id}, 'username', null, 's', ${userName.toLowerCase()})`.execute(store.db);
    };
    await insert("u1", DECOMPOSED);
    await insert("u2", "Ren\u00e9");
    await insert("u3", "ren\u0065\u0301");
    await insert("u4", "plain");
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      expect(await migrateToLatest(store.db, dialect)).toContain("0035_user_names_nfc");
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/1 User\(s\) share a user name.*"id":"u3".*"with":"u2"/);
    } finally {
      warn.mockRestore();
    }
    const rows = await sql<{ id: string; user_name_key: string; attributes: string; text_value: string }>`
      select r.id, r.user_name_key, r.attributes, v.text_value from resources r
      join resource_values v on v.resource_id = r.id and v.path = 'username' order by r.id`.execute(store.db);
    expect(
      rows.rows.map((row) => [row.id, row.user_name_key, JSON.parse(row.attributes).userName, row.text_value]),
    ).toEqual([
      ["u1", PRECOMPOSED, PRECOMPOSED, PRECOMPOSED],
      ["u2", "ren\u00e9", "Ren\u00e9", "ren\u00e9"],
      ["u3", "rene\u0301", "rene\u0301", "rene\u0301"],
      ["u4", "plain", "plain", "plain"],
    ]);
  });
});
