/**
 * Only the core `password` attribute sets a password (issue 41): a `password` inside the
 * enterprise extension is not an attribute of that schema, and is refused (400) on create, in
 * /Bulk and through every PATCH shape. Over real HTTP, on SQLite and PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { bearerCaller, bulkRequest, patchRequest, refusalOf } from "../helpers/http-call.js";
import { STORES } from "../helpers/postgres.js";
import { ENTERPRISE_SCHEMA, USER_SCHEMA } from "../helpers/scim.js";
import { createResource, NEW_PASSWORD, useTestServer } from "../helpers/server.js";

describe.each(STORES)("a password only in the core attribute on %s", (_store, start) => {
  const server = useTestServer({ listen: true }, start);
  const admin = () => bearerCaller(server.url, server.token);
  const withPassword = { [ENTERPRISE_SCHEMA]: { department: "Sales", password: NEW_PASSWORD } };

  it("refuses a password inside the enterprise extension on create, in /Users and /Bulk (400 invalidValue)", async () => {
    const userName = `ext-${crypto.randomUUID().slice(0, 8)}`;
    const single = await admin()("POST", "/Users", {
      schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
      userName,
      ...withPassword,
    });
    expect(refusalOf(single, 400, "validation_failed").scimType).toBe("invalidValue");
    const inBulk = await admin()(
      "POST",
      "/Bulk",
      bulkRequest({ method: "POST", path: "/Users", bulkId: "e", data: { userName, ...withPassword } }),
    );
    const operation = (inBulk.json().Operations as { status: string; response: { scimType: string } }[])[0]!;
    expect(operation.status).toBe("400");
    expect(operation.response.scimType).toBe("invalidValue");
    const found = await admin()("GET", `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`);
    expect(found.json().totalResults).toBe(0);
  });

  it.each([
    ["a path under the extension's URN", { op: "add", path: `${ENTERPRISE_SCHEMA}:password`, value: NEW_PASSWORD }],
    ["the extension as a value", { op: "add", path: ENTERPRISE_SCHEMA, value: { password: NEW_PASSWORD } }],
    ["a path-less value", { op: "replace", value: { [ENTERPRISE_SCHEMA]: { password: NEW_PASSWORD } } }],
  ])("refuses a password through %s of a PATCH (400 invalidPath), nothing changes", async (_name, operation) => {
    const created = await createResource(server.call, {
      resourceType: "User",
      userName: `ext-${crypto.randomUUID().slice(0, 8)}`,
    });
    const answer = await admin()("PATCH", `/Users/${String(created.id)}`, patchRequest(operation));
    expect(refusalOf(answer, 400, "validation_failed").scimType).toBe("invalidPath");
    const after = (await admin()("GET", `/Resources/${String(created.id)}`)).json();
    expect(after.passwordState).toBe("none");
    expect(after.meta).toEqual(created.meta);
  });
});
