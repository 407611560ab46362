/**
 * The PATCH operations (RFC 7644 section 3.5.2) on a resource's attributes, scenario by scenario:
 * what each op does with and without a path, with a value filter, on single, complex and
 * multi-valued attributes, and what it refuses (with SCIM's error type). The HTTP tests run the
 * same operations through the server; these pin the semantics down one case at a time.
 */
import { describe, expect, it } from "vitest";
import { ProblemError } from "../../src/server/problem-error.js";
import { applyPatch, type PatchOperation } from "../../src/server/services/patch-operations.js";
import { attributeSchema, schemaUrns } from "../../src/server/services/scim-attributes.js";

const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";

type Doc = Record<string, unknown>;

const userTarget = {
  schema: attributeSchema("User"),
  urns: schemaUrns("User"),
  extensions: {
    [ENTERPRISE.toLowerCase()]: ["employeeNumber", "costCenter", "organization", "division", "department", "manager"],
  },
};
const customTarget = { schema: undefined, urns: schemaUrns("Group"), extensions: {} };

const BJENSEN: Doc = {
  userName: "bjensen",
  active: true,
  name: { givenName: "Barbara", familyName: "Jensen" },
  emails: [
    { value: "bjensen@example.com", type: "work", primary: true },
    { value: "babs@jensen.org", type: "home" },
  ],
  addresses: [{ type: "work", streetAddress: "100 Universal City Plaza", locality: "Hollywood" }],
  roles: [{ value: "member", primary: true }],
};

/** BJENSEN after her work address became new@example.com */
const WORK_EMAIL_REPLACED: Doc = {
  ...BJENSEN,
  emails: [
    { value: "new@example.com", type: "work", primary: true },
    { value: "babs@jensen.org", type: "home" },
  ],
};

/** [what, one operation on BJENSEN, the attributes it assigns (she is otherwise as she was)] */
const ON_BJENSEN: [string, PatchOperation, Doc][] = [
  ["replace a simple attribute", { op: "replace", path: "displayName", value: "Babs" }, { displayName: "Babs" }],
  ["op names in any case (Entra ID)", { op: "Replace", path: "displayName", value: "Babs" }, { displayName: "Babs" }],
  ['a boolean as a string: "False" (Entra ID)', { op: "Replace", path: "active", value: "False" }, { active: false }],
  ["attribute names in any case", { op: "add", path: "NICKNAME", value: "Babs" }, { nickName: "Babs" }],
  [
    "a sub-attribute of a complex one",
    { op: "replace", path: "name.familyName", value: "Smith" },
    { name: { givenName: "Barbara", familyName: "Smith" } },
  ],
  [
    "replace of a complex one merges its sub-attributes",
    { op: "replace", path: "name", value: { middleName: "Jane" } },
    { name: { givenName: "Barbara", familyName: "Jensen", middleName: "Jane" } },
  ],
  [
    "add to a multi-valued one appends",
    { op: "add", path: "emails", value: [{ value: "b@other.example", type: "other" }] },
    { emails: [...(BJENSEN.emails as Doc[]), { value: "b@other.example", type: "other" }] },
  ],
  [
    "add of a value already there adds nothing",
    { op: "add", path: "emails", value: [{ value: "babs@jensen.org", type: "home" }] },
    {},
  ],
  [
    "replace of a multi-valued one replaces every value",
    { op: "replace", path: "emails", value: [{ value: "only@example.com" }] },
    { emails: [{ value: "only@example.com" }] },
  ],
  [
    "add through a filter that selects nothing makes the element (Entra ID)",
    { op: "Add", path: 'phoneNumbers[type eq "mobile"].value', value: "555-0100" },
    { phoneNumbers: [{ type: "mobile", value: "555-0100" }] },
  ],
  [
    "replace through one too, when the filter is equalities",
    { op: "replace", path: 'emails[type eq "other"].value', value: "o@example.com" },
    { emails: [...(BJENSEN.emails as Doc[]), { type: "other", value: "o@example.com" }] },
  ],
  [
    "replace of the selected values whole",
    { op: "replace", path: 'addresses[type eq "work"]', value: { type: "work", locality: "Burbank" } },
    { addresses: [{ type: "work", locality: "Burbank" }] },
  ],
  ["remove a sub-attribute", { op: "remove", path: "name.givenName" }, { name: { familyName: "Jensen" } }],
  [
    "remove the selected values",
    { op: "remove", path: 'emails[type eq "work" and value ew "example.com"]' },
    { emails: [{ value: "babs@jensen.org", type: "home" }] },
  ],
  ["remove through a filter that selects nothing changes nothing", { op: "remove", path: 'emails[type eq "fax"]' }, {}],
  [
    "no path: a boolean string in the value object (Okta)",
    { op: "replace", value: { active: "false" } },
    { active: false },
  ],
  [
    "an enterprise attribute by its URN path",
    { op: "replace", path: `${ENTERPRISE}:department`, value: "Tour Operations" },
    { department: "Tour Operations" },
  ],
  ["the core schema's URN prefix", { op: "replace", path: `${USER}:displayName`, value: "B" }, { displayName: "B" }],
  [
    "the enterprise extension whole",
    { op: "add", path: ENTERPRISE, value: { division: "Theme Park", costCenter: "4130" } },
    { division: "Theme Park", costCenter: "4130" },
  ],
  [
    "the manager as its id alone (Entra ID)",
    { op: "Add", path: `${ENTERPRISE}:manager`, value: "26118915" },
    { manager: { value: "26118915" } },
  ],
  [
    "the manager as a list of one (Entra ID)",
    { op: "Add", path: "manager", value: [{ $ref: "https://x/Users/1", value: "1" }] },
    { manager: { $ref: "https://x/Users/1", value: "1" } },
  ],
  [
    "the removal of given values (Entra ID's former group-member removal)",
    { op: "Remove", path: "emails", value: [{ value: "babs@jensen.org" }] },
    { emails: [{ value: "bjensen@example.com", type: "work", primary: true }] },
  ],
];

/** [what, the attributes, the operations, what they become] */
const APPLIED: [string, Doc, PatchOperation[], Doc][] = [
  ...ON_BJENSEN.map(([what, operation, assigned]): [string, Doc, PatchOperation[], Doc] => [
    what,
    BJENSEN,
    [operation],
    { ...BJENSEN, ...assigned },
  ]),
  ['"true" in any case', { ...BJENSEN, active: false }, [{ op: "replace", path: "active", value: "TRUE" }], BJENSEN],
  [
    'a value filter: emails[type eq "work"].value',
    BJENSEN,
    [{ op: "replace", path: 'emails[type eq "work"].value', value: "new@example.com" }],
    WORK_EMAIL_REPLACED,
  ],
  [
    "a filter compares strings in any case",
    BJENSEN,
    [{ op: "replace", path: 'emails[TYPE eq "WORK"].value', value: "new@example.com" }],
    WORK_EMAIL_REPLACED,
  ],
  [
    "a value made primary leaves the others not primary",
    BJENSEN,
    [{ op: "replace", path: 'emails[type eq "home"].primary', value: true }],
    {
      ...BJENSEN,
      emails: [
        { value: "bjensen@example.com", type: "work", primary: false },
        { value: "babs@jensen.org", type: "home", primary: true },
      ],
    },
  ],
  [
    "remove an attribute",
    BJENSEN,
    [{ op: "remove", path: "addresses" }],
    (({ addresses: _a, ...rest }) => rest)(BJENSEN),
  ],
  [
    "remove the last value leaves the attribute unassigned",
    BJENSEN,
    [{ op: "remove", path: 'addresses[type eq "work"]' }],
    (({ addresses: _a, ...rest }) => rest)(BJENSEN),
  ],
  [
    "replace with null unassigns",
    { ...BJENSEN, title: "Boss" },
    [{ op: "replace", path: "title", value: null }],
    BJENSEN,
  ],
  [
    "no path: each member a path of its own, names with dots and URNs (Entra ID)",
    BJENSEN,
    [
      {
        op: "replace",
        value: { displayName: "Bjfe", "name.givenName": "Kkom", [`${ENTERPRISE}:employeeNumber`]: "Aklq" },
      },
    ],
    { ...BJENSEN, displayName: "Bjfe", name: { givenName: "Kkom", familyName: "Jensen" }, employeeNumber: "Aklq" },
  ],
  [
    "the manager's $ref",
    { ...BJENSEN, manager: { value: "1" } },
    [{ op: "add", path: "manager.$ref", value: "../Users/1" }],
    { ...BJENSEN, manager: { value: "1", $ref: "../Users/1" } },
  ],
  [
    "operations apply in order",
    BJENSEN,
    [
      { op: "add", path: "title", value: "A" },
      { op: "replace", path: "title", value: "B" },
    ],
    { ...BJENSEN, title: "B" },
  ],
];

/** [what, the operation]: each refused with this SCIM error type, the error naming its path */
const refusedAs = (scimType: string, rows: [string, PatchOperation][]): [string, PatchOperation[], string, string][] =>
  rows.map(([what, operation]) => [what, [operation], scimType, "/Operations/0/path"]);

/** [what, the operations, SCIM's error type, the member the error names] */
const REFUSED: [string, PatchOperation[], string, string][] = [
  ["an op that is not one", [{ op: "move", path: "title", value: "x" }], "invalidSyntax", "/Operations/0/op"],
  ["remove without a path", [{ op: "remove" }], "noTarget", "/Operations/0/path"],
  ["add without a value", [{ op: "add", path: "title" }], "invalidValue", "/Operations/0/value"],
  ["no path and a value that is not an object", [{ op: "replace", value: "x" }], "invalidValue", "/Operations/0/value"],
  ...refusedAs("invalidPath", [
    ["an attribute the schema does not have", { op: "add", path: "shoeSize", value: 42 }],
    ["a sub-attribute it does not have", { op: "add", path: "name.nick", value: "x" }],
    ["a path that does not parse", { op: "add", path: "emails[type eq]", value: "x" }],
    ["a bracket never closed", { op: "add", path: 'emails[type eq "work"', value: "x" }],
    [
      "a value filter on a single-valued attribute",
      { op: "add", path: 'name[givenName eq "x"].familyName', value: "x" },
    ],
    ["a sub-attribute of a multi-valued one without a filter", { op: "replace", path: "emails.value", value: "x" }],
    ["a schema the resource does not have", { op: "add", path: "urn:example:ext:2.0:User:tag", value: "x" }],
  ]),
  ...refusedAs("noTarget", [
    [
      "replace through a filter that selects nothing and makes nothing",
      { op: "replace", path: 'emails[value co "nobody"].type', value: "x" },
    ],
  ]),
  ...refusedAs("mutability", [
    ["the id", { op: "replace", path: "id", value: "x" }],
    ["meta", { op: "replace", path: "meta.created", value: "x" }],
    [
      "the account state",
      { op: "replace", path: "urn:bizctl:schemas:extension:account:2.0:User:locked", value: false },
    ],
    ["firstLogin", { op: "replace", path: "firstLogin", value: false }],
  ]),
  [
    "the second operation, named as such",
    [
      { op: "add", path: "title", value: "x" },
      { op: "add", path: "nope", value: 1 },
    ],
    "invalidPath",
    "/Operations/1/path",
  ],
];

describe("PATCH operations on a User", () => {
  it.each(APPLIED)("%s", (_what, before, operations, after) => {
    const frozen = structuredClone(before);
    expect(applyPatch(before, operations, userTarget)).toEqual(after);
    // the attributes given are not changed in place
    expect(before).toEqual(frozen);
  });

  it.each(REFUSED)("refuses %s: 400 %s", (_what, operations, scimType, path) => {
    let thrown: unknown;
    try {
      applyPatch(BJENSEN, operations, userTarget);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProblemError);
    const problem = thrown as ProblemError;
    expect([problem.status, problem.code, problem.extra.scimType, problem.errors?.[0]?.path]).toEqual([
      400,
      "validation_failed",
      scimType,
      path,
    ]);
  });
});

describe("PATCH operations on a resource of a custom type (free-form attributes)", () => {
  const group: Doc = { displayName: "Tour Guides", members: [{ value: "a", display: "Ann" }], tags: ["x", "y"] };
  it.each([
    [
      "adds members",
      [{ op: "add", path: "members", value: [{ value: "b" }] }],
      { ...group, members: [{ value: "a", display: "Ann" }, { value: "b" }] },
    ],
    [
      "removes one by a filter on value",
      [{ op: "remove", path: 'members[value eq "a"]' }],
      (({ members: _m, ...rest }) => rest)(group),
    ],
    [
      "selects a string of a multi-valued string attribute by value",
      [{ op: "remove", path: 'tags[value eq "X"]' }],
      { ...group, tags: ["y"] },
    ],
    [
      "names an attribute as it is stored, in any case",
      [{ op: "replace", path: "DISPLAYNAME", value: "Guides" }],
      { ...group, displayName: "Guides" },
    ],
    ["adds a new attribute as sent", [{ op: "add", path: "capacity", value: 12 }], { ...group, capacity: 12 }],
    [
      "takes its type's URN prefix",
      [{ op: "replace", path: "urn:bizctl:schemas:Group:displayName", value: "G" }],
      { ...group, displayName: "G" },
    ],
  ] as [string, PatchOperation[], Doc][])("%s", (_what, operations, after) => {
    expect(applyPatch(group, operations, customTarget)).toEqual(after);
  });
});
