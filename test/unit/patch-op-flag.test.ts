/** `--op OP[:PATH][=VALUE]` of `bizctl resources patch`, read into SCIM PATCH operations. */
import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/cli/errors.js";
import { parsePatchOperation } from "../../src/cli/patch-operations.js";

describe("--op", () => {
  it.each([
    ["replace:active=false", { op: "replace", path: "active", value: false }],
    ["Replace:active=False", { op: "replace", path: "active", value: "False" }],
    ["add:nickName=Babs", { op: "add", path: "nickName", value: "Babs" }],
    [
      'add:emails[type eq "work"].value=a@example.com',
      { op: "add", path: 'emails[type eq "work"].value', value: "a@example.com" },
    ],
    ['remove:members[value eq "a=b"]', { op: "remove", path: 'members[value eq "a=b"]' }],
    ["remove:title", { op: "remove", path: "title" }],
    [
      "add:urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department=Sales",
      { op: "add", path: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", value: "Sales" },
    ],
    ['replace={"displayName":"Ada"}', { op: "replace", value: { displayName: "Ada" } }],
    ["replace:title=a=b", { op: "replace", path: "title", value: "a=b" }],
    ['add:roles=[{"value":"support"}]', { op: "add", path: "roles", value: [{ value: "support" }] }],
    ["replace:title=", { op: "replace", path: "title", value: "" }],
  ])("%s", (flag, operation) => {
    expect(parsePatchOperation(flag)).toEqual(operation);
  });

  it.each([
    ["move:title=x", /is not an operation/],
    ["replace:title", /needs a value/],
    ["remove", /remove needs a path/],
    ["replace=Ada", /without a path, the value is a JSON object/],
    ["add:=x", /names no path/],
    ["adds:title=x", /is not an operation/],
  ])("refuses %s", (flag, message) => {
    expect(() => parsePatchOperation(flag)).toThrow(UsageError);
    expect(() => parsePatchOperation(flag)).toThrow(message);
  });
});
