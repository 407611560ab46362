import { describe, expect, it } from "vitest";
import { checkColumns, columnPath, csvRow, parseRenames, userFromRow } from "../../src/cli/user-records.js";

/** The header convention of `users import`, column by column, and its inverse in `users export`. */

describe("the header convention", () => {
  it.each([
    ["userName", ["userName"]],
    ["name.givenName", ["name", "givenName"]],
    ["emails[0].value", ["emails", 0, "value"]],
    ["emails[1].type", ["emails", 1, "type"]],
    ["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", ["department"]],
    ["manager.value", ["manager", "value"]],
  ])("%s is the path %j", (column, path) => {
    expect(columnPath(column)).toEqual(path);
  });

  it.each([
    [
      { userName: "a", active: "TRUE" },
      { userName: "a", active: true },
    ],
    [
      { userName: "a", active: "0" },
      { userName: "a", active: false },
    ],
    [
      { userName: "a", roles: "admin; support" },
      {
        userName: "a",
        roles: [
          { value: "admin", primary: true },
          { value: "support", primary: false },
        ],
      },
    ],
    [
      { userName: "a", "emails[1].value": "b@example.com", "emails[0].value": "" },
      { userName: "a", emails: [{ value: "b@example.com" }] },
    ],
    [
      { userName: "a", "emails[0].primary": "yes" },
      { userName: "a", emails: [{ primary: true }] },
    ],
    [
      { userName: "a", "name.givenName": "Zoë", title: "" },
      { userName: "a", name: { givenName: "Zoë" } },
    ],
  ])("the row %j is the User %j", (row, user) => {
    expect(userFromRow(row)).toEqual(user);
  });

  it.each([
    [["userName", "password"], /never reads a password in clear/],
    [["userName", "id"], /assigned by the server/],
    [["userName", "firstLogin"], /assigned by the server/],
    [["userName", "resourceType"], /imports Users only/],
    [["userName", "shoe.size"], /'shoe.size' is not a User attribute/],
    [["userName", "emails[x].value"], /not an attribute path/],
  ])("refuses the header %j", (columns, message) => {
    expect(() => checkColumns(columns)).toThrow(message);
  });

  it("refuses a boolean that is not one, naming the column", () => {
    expect(() => userFromRow({ userName: "a", active: "perhaps" })).toThrow(/active must be true or false/);
  });

  it.each([["a"], ["=b"], ["a="]])("--map %s is refused", (pair) => {
    expect(() => parseRenames([pair])).toThrow(/OLD=NEW/);
  });

  it("exports a User as the columns it imports", () => {
    const user = {
      id: "x",
      meta: {},
      userName: "a",
      emails: [{ value: "a@example.com", type: "work" }],
      roles: [{ value: "member" }, { value: "support" }],
      locked: false,
    };
    const row = csvRow(user);
    expect(row).toMatchObject({ userName: "a", roles: "member;support", "emails[0]": { value: "a@example.com" } });
    expect(row).not.toHaveProperty("id");
    expect(row).not.toHaveProperty("locked");
    expect(userFromRow({ userName: "a", roles: String(row.roles), "emails[0].value": "a@example.com" })).toEqual({
      userName: "a",
      roles: [
        { value: "member", primary: true },
        { value: "support", primary: false },
      ],
      emails: [{ value: "a@example.com" }],
    });
  });
});
