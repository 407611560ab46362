/**
 * `bizctl resources patch` (SCIM PATCH from the command line) and the SCIM endpoints through the
 * real binary, embedded and against a server: operations from flags and from a file, refusals with
 * their exit codes, and SCIM error bodies read as the CLI reads any problem.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { errorOf, json, MODES, show, useSession } from "../helpers/cli.js";

const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

describe.each(MODES)("resources patch and /Users (%s)", (mode) => {
  const s = useSession(mode);
  let id: string;
  beforeAll(async () => {
    const created = await s.run([
      "users",
      "create",
      "--user-name",
      "pat",
      "--email",
      "pat@example.com",
      "--no-password",
      "--json",
    ]);
    expect(created.exitCode, show(created)).toBe(0);
    id = json(created).id;
  }, 120_000);

  it.each([
    ["a boolean", ["--op", "replace:active=false"], (u: Record<string, unknown>) => expect(u.active).toBe(false)],
    [
      "a value filter and a removal",
      ["--op", 'add:emails[type eq "home"].value=pat.home@example.com', "--op", "remove:title"],
      (u: Record<string, unknown>) =>
        expect(u.emails).toEqual([
          expect.objectContaining({ value: "pat@example.com", primary: true }),
          { type: "home", value: "pat.home@example.com" },
        ]),
    ],
    [
      "no path, a JSON object of attributes, and an enterprise attribute by its URN",
      [
        "--op",
        'replace={"displayName":"Pat","active":"True"}',
        "--op",
        "add:urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department=Sales",
      ],
      (u: Record<string, unknown>) =>
        expect(u).toMatchObject({ displayName: "Pat", active: true, department: "Sales" }),
    ],
  ])("patches with %s", async (_what, flags, check) => {
    const result = await s.run(["resources", "patch", id, ...flags, "--json"]);
    expect(result.exitCode, show(result)).toBe(0);
    check(json(result));
  });

  it("takes a PatchOp message from a file (stdin)", async () => {
    const message = { schemas: [PATCH_OP], Operations: [{ op: "Replace", path: "title", value: "Clerk" }] };
    const result = await s.run(["resources", "patch", id, "--file", "-", "--json"], { input: JSON.stringify(message) });
    expect(result.exitCode, show(result)).toBe(0);
    expect(json(result).title).toBe("Clerk");
  });

  it.each([
    ["an op that is none", () => ["resources", "patch", id, "--op", "move:title=x"], 2, "usage"],
    ["nothing to change", () => ["resources", "patch", id], 2, "usage"],
    [
      "a role that is none",
      () => ["resources", "patch", id, "--op", 'replace:roles=[{"value":"boss"}]'],
      7,
      "validation_failed",
    ],
    [
      "a path the schema does not have",
      () => ["resources", "patch", id, "--op", "add:shoeSize=42"],
      7,
      "validation_failed",
    ],
    [
      "a stale If-Match",
      () => ["resources", "patch", id, "--op", "replace:title=x", "--if-match", '"1"'],
      6,
      "precondition_failed",
    ],
    ["an id that is none", () => ["resources", "patch", "no-such-id", "--op", "replace:title=x"], 3, "not_found"],
  ])("refuses %s: exit %s", async (_what, args, exit, code) => {
    const result = await s.run([...args(), "-o", "json"]);
    expect([result.exitCode, errorOf(result).code], show(result)).toEqual([exit, code]);
  });

  it("reads the SCIM representation through bizctl api, and a SCIM error like any problem", async () => {
    const read = await s.run(["api", "GET", `/Users/${id}`]);
    expect(read.exitCode, show(read)).toBe(0);
    expect(json(read)).toMatchObject({
      id,
      userName: "pat",
      title: "Clerk",
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { department: "Sales" },
      meta: { location: `/Users/${id}` },
    });
    const missing = await s.run(["api", "GET", "/Users/no-such-id", "-o", "json"]);
    expect([missing.exitCode, errorOf(missing).code, errorOf(missing).status], show(missing)).toEqual([
      3,
      "not_found",
      404,
    ]);
    const refused = await s.run([
      "api",
      "PATCH",
      `/Users/${id}`,
      "--data",
      JSON.stringify({ schemas: [], Operations: [{ op: "add", path: "title", value: "x" }] }),
      "-o",
      "json",
    ]);
    expect([refused.exitCode, errorOf(refused).code], show(refused)).toEqual([7, "validation_failed"]);
  });

  it("keeps users and resources working: list, get and update the patched user", async () => {
    const listed = await s.run(["users", "list", "--filter", 'department eq "Sales"', "--json"]);
    expect(listed.exitCode, show(listed)).toBe(0);
    expect(json(listed).map((u: { id: string }) => u.id)).toEqual([id]);
    const updated = await s.run(["users", "update", "pat", "--set", "title=Manager", "--json"]);
    expect(updated.exitCode, show(updated)).toBe(0);
    const got = await s.run(["resources", "get", id, "--json"]);
    expect(json(got)).toMatchObject({ title: "Manager", displayName: "Pat", active: true });
  });
});
