import { beforeAll, describe, expect, it } from "vitest";
import { insertResource } from "../../src/server/store/resources-repo.js";
import { createResource, manualClock, problemOf, useTestServer } from "../helpers/server.js";

type Json = Record<string, unknown>;

const USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENTERPRISE_URN = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/**
 * The users of RFC 7644's examples (bjensen's attributes are RFC 7643 section 8.2's), with
 * neighbours chosen so that every example filter separates someone, each written at a known
 * time so that the meta.lastModified examples have exact answers. The admin was written at 04:00.
 */
const SEED: [name: string, at: string, body: Json][] = [
  [
    "jsmith",
    "2011-05-13T04:42:33Z",
    {
      resourceType: "User",
      userName: "JSmith",
      name: { familyName: "Smith" },
      userType: "Employee",
      emails: [{ value: "jsmith@example.org", type: "work" }],
    },
  ],
  [
    "bjensen",
    "2011-05-13T04:42:34Z",
    {
      schemas: [USER_URN, ENTERPRISE_URN],
      userName: "bjensen",
      name: { formatted: "Ms. Barbara J Jensen III", familyName: "Jensen", givenName: "Barbara" },
      title: "Tour Guide",
      userType: "Employee",
      emails: [
        { value: "bjensen@example.com", type: "work", primary: true },
        { value: "babs@jensen.org", type: "home" },
      ],
      ims: [{ value: "someaimhandle", type: "aim" }],
    },
  ],
  // half a second after bjensen: only a normalised comparison of timestamps tells them apart
  ["zed", "2011-05-13T04:42:34.500Z", { resourceType: "User", userName: "Zed.Half", title: "" }],
  [
    "momalley",
    "2011-05-13T04:42:35Z",
    {
      resourceType: "User",
      userName: "momalley",
      name: { familyName: "O'Malley", givenName: "Mary" },
      userType: "Intern",
      emails: [{ value: "mo@example.com", type: "home" }],
      // xmpp and @foo.com, but in two different elements
      ims: [
        { value: "mo@foo.com", type: "aim" },
        { value: "mo@bar.com", type: "xmpp" },
      ],
    },
  ],
  [
    "jdoe",
    "2011-05-13T04:42:36Z",
    {
      resourceType: "User",
      userName: "jdoe",
      name: { familyName: "Doe" },
      title: "Manager",
      userType: "Contractor",
      emails: [{ value: "jdoe@example.org", type: "work" }],
      ims: [{ value: "jdoe@foo.com", type: "xmpp" }],
    },
  ],
  [
    "wanda",
    "2011-05-13T04:42:37Z",
    {
      resourceType: "User",
      userName: "wanda",
      name: { familyName: "Mac o'malley" },
      userType: "Employee",
      emails: [{ value: "wanda@other.net", type: "work" }],
    },
  ],
  [
    "sam",
    "2011-05-13T04:42:38Z",
    {
      resourceType: "User",
      userName: "sam",
      userType: "employee",
      // work and @example.com, but in two different elements
      emails: [
        { value: "sam@other.net", type: "work" },
        { value: "sam@example.com", type: "home" },
      ],
    },
  ],
  [
    "room",
    "2011-05-13T04:42:39Z",
    {
      resourceType: "Room",
      displayName: "Board room",
      floor: 3,
      capacity: 12,
      label: 'say "hi" to a\\b',
      tags: ["Quiet", "projector"],
    },
  ],
];

const USERS = ["admin", "jsmith", "bjensen", "zed", "momalley", "jdoe", "wanda", "sam"];
const EVERYONE = [...USERS, "room"];

describe("resources filter", () => {
  const time = manualClock(new Date("2011-05-13T04:00:00Z"));
  const server = useTestServer({ clock: time.clock });
  const admin = server.call;
  const nameOf = new Map<string, string>();
  const idOf = new Map<string, string>();

  beforeAll(async () => {
    nameOf.set(server.admin.id, "admin");
    idOf.set("admin", server.admin.id);
    for (const [name, at, body] of SEED) {
      time.advance(Date.parse(at) - time.clock().getTime());
      const created = await createResource(admin, body);
      expect((created.meta as Json).lastModified).toBe(new Date(at).toISOString());
      nameOf.set(created.id as string, name);
      idOf.set(name, created.id as string);
    }
  });

  const list = (query: string) => admin("GET", `/Resources?count=500&${query}`);
  /** The names of what the filter selects, sorted. */
  async function select(filter: string, query = ""): Promise<string[]> {
    const response = await list(`filter=${encodeURIComponent(filter)}${query}`);
    expect(response.statusCode, `${filter}: ${response.body.slice(0, 300)}`).toBe(200);
    const body = response.json();
    expect(body.totalResults).toBe(body.Resources.length);
    return (body.Resources as Json[]).map((r) => nameOf.get(r.id as string) ?? `unknown ${r.id}`).sort();
  }
  const sorted = (names: string[]) => [...names].sort();

  describe("the examples of RFC 7644 section 3.4.2.2", () => {
    const examples: [string, string[]][] = [
      ['userName eq "bjensen"', ["bjensen"]],
      [`name.familyName co "O'Malley"`, ["momalley", "wanda"]],
      ['userName sw "J"', ["jdoe", "jsmith"]],
      ['urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J"', ["jdoe", "jsmith"]],
      ["title pr", ["bjensen", "jdoe"]],
      ['meta.lastModified gt "2011-05-13T04:42:34Z"', ["zed", "momalley", "jdoe", "wanda", "sam", "room"]],
      ['meta.lastModified ge "2011-05-13T04:42:34Z"', ["bjensen", "zed", "momalley", "jdoe", "wanda", "sam", "room"]],
      ['meta.lastModified lt "2011-05-13T04:42:34Z"', ["admin", "jsmith"]],
      ['meta.lastModified le "2011-05-13T04:42:34Z"', ["admin", "jsmith", "bjensen"]],
      ['title pr and userType eq "Employee"', ["bjensen"]],
      ['title pr or userType eq "Intern"', ["bjensen", "jdoe", "momalley"]],
      // `schemas` follows from the type, as in the representation: every User carries the extension
      [`schemas eq "${ENTERPRISE_URN}"`, USERS],
      [
        'userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")',
        ["jsmith", "bjensen", "sam"],
      ],
      [
        'userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")',
        ["admin", "zed", "room"],
      ],
      ['userType eq "Employee" and (emails.type eq "work")', ["jsmith", "bjensen", "wanda", "sam"]],
      ['userType eq "Employee" and emails[type eq "work" and value co "@example.com"]', ["bjensen"]],
      [
        'emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]',
        ["bjensen", "jdoe"],
      ],
    ];
    it.each(examples)("%s", async (filter, expected) => {
      expect(await select(filter)).toEqual(sorted(expected));
    });
  });

  describe("semantics", () => {
    const cases: [string, string, string[]][] = [
      ["attribute names are case-insensitive", 'USERNAME EQ "bjensen"', ["bjensen"]],
      ["operators and keywords are case-insensitive", 'title PR AnD userType Eq "employee"', ["bjensen"]],
      ["string values compare case-insensitively", 'userName eq "JSMITH"', ["jsmith"]],
      ["ew", 'userName ew "SMITH"', ["jsmith"]],
      ["a sub-attribute of a complex attribute", 'name.givenName eq "mary"', ["momalley"]],
      ["a multi-valued attribute matches when any value does", 'emails.value eq "babs@jensen.org"', ["bjensen"]],
      ["emails co means emails.value co", 'emails co "@JENSEN.org"', ["bjensen"]],
      ["emails eq means emails.value eq", 'emails eq "sam@example.com"', ["sam"]],
      [
        "without a value path, the two conditions may hold in different elements",
        'userType eq "Employee" and emails.type eq "work" and emails.value co "@example.com"',
        ["bjensen", "sam"],
      ],
      [
        "a value path needs one element to satisfy the whole inner filter",
        'ims[type eq "xmpp" and value co "@foo.com"]',
        ["jdoe"],
      ],
      [
        "a value path with or inside",
        'emails[type eq "home" or value ew ".net"]',
        ["bjensen", "momalley", "wanda", "sam"],
      ],
      ["a value path with not inside", 'emails[not (type eq "work")]', ["bjensen", "momalley", "sam"]],
      ["a value path with pr inside", "ims[type pr]", ["bjensen", "momalley", "jdoe"]],
      [
        "ne matches a resource without the attribute",
        'userType ne "Employee"',
        ["admin", "zed", "momalley", "jdoe", "room"],
      ],
      ["ne on a multi-valued attribute: no value equal", 'emails.type ne "work"', ["admin", "zed", "momalley", "room"]],
      ["eq null means not present", "title eq null", ["admin", "jsmith", "zed", "momalley", "wanda", "sam", "room"]],
      ["ne null means present", "title ne null", ["bjensen", "jdoe"]],
      ["an empty string is no value (pr)", "title pr", ["bjensen", "jdoe"]],
      [
        "a complex attribute is present when a sub-attribute is",
        "name pr",
        ["jsmith", "bjensen", "momalley", "jdoe", "wanda"],
      ],
      [
        "a multi-valued complex attribute is present when an element has a value",
        "ims pr",
        ["bjensen", "momalley", "jdoe"],
      ],
      ["a number", "capacity ge 12 and floor lt 4", ["room"]],
      ["a negative number before and", "capacity gt -5 and floor eq 3", ["room"]],
      ["a negative number before )", "(capacity gt -5)", ["room"]],
      ["a decimal", "floor gt 2.5", ["room"]],
      ["a string does not equal a number", 'capacity eq "12"', []],
      ["a boolean", "active eq true", USERS],
      ["a boolean does not equal its text", 'active eq "true"', []],
      ["a simple multi-valued attribute", 'tags eq "quiet"', ["room"]],
      ['a JSON escape in a string: \\" and \\\\', 'label eq "say \\"hi\\" to a\\\\b"', ["room"]],
      ["meta.resourceType", 'meta.resourceType eq "room"', ["room"]],
      ["resourceType", 'resourceType eq "User" and userName sw "j"', ["jdoe", "jsmith"]],
      ["schemas of a custom type", 'schemas eq "urn:bizctl:schemas:Room"', ["room"]],
      ["schemas co", 'schemas co "core:2.0:user"', USERS],
      ["displayName of a custom type", 'displayName co "board"', ["room"]],
      [
        "a timestamp with an offset is normalised",
        'meta.created lt "2011-05-13T06:42:34.001+02:00"',
        ["admin", "jsmith", "bjensen"],
      ],
      ["an unknown attribute matches nothing", 'shoeSize eq "44"', []],
      ["and an unknown attribute is not present", "shoeSize pr", []],
      ["a LIKE wildcard is a plain character", 'userName co "%"', []],
      ["so is the other one", 'userName sw "_"', []],
      ["a quote is a plain character", `name.familyName co "'"`, ["momalley", "wanda"]],
    ];
    it.each(cases)("%s: %s", async (_what, filter, expected) => {
      expect(await select(filter)).toEqual(sorted(expected));
    });

    it("compares id exactly (case-sensitive)", async () => {
      const id = idOf.get("bjensen")!;
      expect(await select(`id eq "${id}"`)).toEqual(["bjensen"]);
      expect(await select(`id eq "${id.toUpperCase()}"`)).toEqual(id === id.toUpperCase() ? ["bjensen"] : []);
      // an id begins with the time it was made (UUID version 7): its random end tells it apart
      expect(await select(`id sw "${id.slice(0, 30)}"`)).toEqual(["bjensen"]);
    });

    it("combines a filter with resourcetypes", async () => {
      expect(await select('meta.lastModified gt "2011-05-13T04:42:37Z"', "&resourcetypes=Room")).toEqual(["room"]);
      expect(await select('meta.lastModified gt "2011-05-13T04:42:37Z"', "&resourcetypes=User")).toEqual(["sam"]);
      expect(await select('meta.lastModified gt "2011-05-13T04:42:37Z"', "&resourcetypes=User,Room")).toEqual([
        "room",
        "sam",
      ]);
    });

    it("lists what resourcetypes names, and nothing for an unknown type", async () => {
      expect(await select("id pr", "&resourcetypes=Room")).toEqual(["room"]);
      expect(await select("id pr", "&resourcetypes=User")).toEqual(sorted(USERS));
      expect(await select("id pr", "&resourcetypes=Desk")).toEqual([]);
      expect(await select("id pr", "&resourcetypes=User,%20Room")).toEqual(sorted(EVERYONE));
      const lower = await list("resourcetypes=room");
      expect(problemOf(lower, 400, "validation_failed").scimType).toBe("invalidValue");
    });

    it("validates the filter on GET by id too", async () => {
      const id = idOf.get("room")!;
      const bad = await admin("GET", `/Resources/${id}?filter=${encodeURIComponent("floor eq")}`);
      problemOf(bad, 400, "invalid_filter");
    });
  });

  describe("precedence: not over and over or", () => {
    const cases: [string, string[]][] = [
      // (Intern) or (title pr and Employee); left to right it would be bjensen alone
      ['userType eq "Intern" or title pr and userType eq "Employee"', ["momalley", "bjensen"]],
      ['title pr and userType eq "Employee" or userType eq "Intern"', ["momalley", "bjensen"]],
      ['(userType eq "Intern" or title pr) and userType eq "Employee"', ["bjensen"]],
      // not applies to its parenthesis only
      ['not (userType eq "Employee") and title pr', ["jdoe"]],
      ['not (userType eq "Employee" and title pr)', EVERYONE.filter((n) => n !== "bjensen")],
      [
        'userName eq "jdoe" or not (title pr) and userType eq "Intern" or userName eq "sam"',
        ["jdoe", "momalley", "sam"],
      ],
      ['userName eq "jdoe" OR userName eq "sam" AND userType eq "Contractor"', ["jdoe"]],
    ];
    it.each(cases)("%s", async (filter, expected) => {
      expect(await select(filter)).toEqual(sorted(expected));
    });
  });

  describe("sortby, sortorder, startindex, count", () => {
    const names = (body: { Resources: Json[] }) => body.Resources.map((r) => nameOf.get(r.id as string));
    const BY_USERNAME = ["admin", "bjensen", "jdoe", "jsmith", "momalley", "sam", "wanda", "zed", "room"];

    it("sorts by userName case-insensitively; a resource without it sorts last ascending", async () => {
      const response = await list("sortby=userName");
      expect(names(response.json())).toEqual(BY_USERNAME);
      const urn = await list(`sortby=${encodeURIComponent(`${USER_URN}:userName`)}&sortorder=ascending`);
      expect(names(urn.json())).toEqual(BY_USERNAME);
    });

    it("sorts descending with the missing first", async () => {
      const response = await list("sortby=USERNAME&sortorder=descending");
      expect(names(response.json())).toEqual([...BY_USERNAME].reverse());
    });

    it("sorts by a timestamp and by a sub-attribute", async () => {
      const byTime = await list("sortby=meta.lastModified");
      expect(names(byTime.json())).toEqual([
        "admin",
        "jsmith",
        "bjensen",
        "zed",
        "momalley",
        "jdoe",
        "wanda",
        "sam",
        "room",
      ]);
      const byFamily = names((await list("sortby=name.familyName")).json());
      expect(byFamily.slice(0, 5)).toEqual(["jdoe", "bjensen", "wanda", "momalley", "jsmith"]);
      expect(sorted(byFamily.slice(5) as string[])).toEqual(sorted(["admin", "zed", "sam", "room"]));
    });

    it("answers 200 for an unknown sort path, everything being equally missing", async () => {
      const response = await list("sortby=no.such.attribute");
      expect(response.statusCode).toBe(200);
      expect(sorted(names(response.json()) as string[])).toEqual(sorted(EVERYONE));
      const desc = await list("sortby=nothing&sortorder=descending");
      expect(desc.statusCode).toBe(200);
      expect(desc.json().totalResults).toBe(EVERYONE.length);
    });

    it("refuses sortby that is not an attribute path and an unknown sortorder", async () => {
      expect(problemOf(await list("sortby=a%20b"), 400, "validation_failed").scimType).toBe("invalidValue");
      expect(problemOf(await list("sortby=x'y"), 400, "validation_failed").scimType).toBe("invalidValue");
      expect(problemOf(await list("sortorder=up"), 400, "validation_failed").scimType).toBe("invalidValue");
      expect((await list("sortby=userName&sortorder=DESCENDING")).statusCode).toBe(200);
    });

    it("pages with startindex and count on a sorted list", async () => {
      const page = (await admin("GET", "/Resources?sortby=userName&startindex=2&count=3")).json();
      expect(page).toMatchObject({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        totalResults: 9,
        startIndex: 2,
        itemsPerPage: 3,
      });
      expect(names(page)).toEqual(BY_USERNAME.slice(1, 4));
      const last = (await admin("GET", "/Resources?sortby=userName&startindex=8&count=5")).json();
      expect(last).toMatchObject({ totalResults: 9, startIndex: 8, itemsPerPage: 2 });
      expect(names(last)).toEqual(["zed", "room"]);
      const beyond = (await admin("GET", "/Resources?startindex=50")).json();
      expect(beyond).toMatchObject({ totalResults: 9, startIndex: 50, itemsPerPage: 0, Resources: [] });
    });

    it("pages a filtered list: totalResults counts the matches", async () => {
      const page = (
        await admin("GET", `/Resources?filter=${encodeURIComponent("title pr")}&count=1&sortby=title`)
      ).json();
      expect(page).toMatchObject({ totalResults: 2, itemsPerPage: 1 });
      expect(names(page)).toEqual(["jdoe"]);
    });

    it.each(["0", "-5", "-999999999"])("treats startindex=%s as 1", async (value) => {
      const body = (await admin("GET", `/Resources?sortby=userName&count=2&startindex=${value}`)).json();
      expect(body.startIndex).toBe(1);
      expect(names(body)).toEqual(BY_USERNAME.slice(0, 2));
    });

    it("treats a negative count as 0, and count=0 returns only totalResults", async () => {
      for (const count of ["-1", "0", "-999999999"]) {
        const response = await admin("GET", `/Resources?count=${count}`);
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual({
          schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
          totalResults: 9,
          startIndex: 1,
          itemsPerPage: 0,
          Resources: [],
        });
      }
    });

    it.each([
      ["count", "abc"],
      ["count", "1e3"],
      ["count", "1.5"],
      ["count", ""],
      ["count", "9999999999"],
      ["startindex", "x"],
      ["startindex", "0x10"],
      ["startindex", "1 "],
    ])("refuses %s=%j with 400", async (name, value) => {
      const response = await admin("GET", `/Resources?${name}=${encodeURIComponent(value)}`);
      const problem = problemOf(response, 400, "validation_failed");
      expect(problem.scimType).toBe("invalidValue");
      expect(JSON.stringify(problem.errors)).toContain(name);
    });

    it("refuses an unknown query parameter", async () => {
      problemOf(await admin("GET", "/Resources?counts=1"), 400, "validation_failed");
    });
  });

  describe("a list of Users alone knows a User's attributes", () => {
    const usersOnly = (query: string) => admin("GET", `/Resources?resourcetypes=User&${query}`);
    const scimUsers = (query: string) => admin("GET", `/Users?${query}`);

    it.each([
      ["an unknown attribute", 'nmae eq "x"', "Users cannot be filtered by 'nmae'."],
      ["an unknown attribute under not", "not (nmae pr)", "Users cannot be filtered by 'nmae'."],
      ["an unknown sub-attribute in a value path", 'emails[tpye eq "work"]', "Users cannot be filtered by 'tpye'."],
      ["an unknown sub-attribute", 'name.given eq "Barbara"', "Users cannot be filtered by 'name.given'."],
      ["a boolean compared with text", 'active eq "yes"', `'active' is true or false, not "yes".`],
      ["a number compared with text", 'failedLogins gt "a"', `'failedLogins' is a number, not "a".`],
      ["text compared with a number", "userName eq 5", "'userName' is text: compare it with a quoted string, not 5."],
      ["a complex attribute without a value", 'name eq "x"', "'name' has parts: compare one of them (name.…)."],
      [
        "a User's groups, which are the groups' members",
        'groups.display eq "Team"',
        "Users cannot be filtered by their groups ('groups.display'): list a group's members instead (GET /Groups/{id}, 'bizctl groups members GROUP').",
      ],
    ])("refuses %s: %s", async (_what, filter, message) => {
      const query = `filter=${encodeURIComponent(filter)}`;
      expect(problemOf(await usersOnly(query), 400, "invalid_filter").detail).toBe(message);
      // SCIM's /Users says it in a SCIM error body
      const scim = await scimUsers(query);
      expect(scim.statusCode, scim.body).toBe(400);
      expect(scim.json()).toMatchObject({ scimType: "invalidFilter", detail: message });
    });

    it.each([
      ['name.givenName eq "Barbara"', ["bjensen"]],
      ["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department pr", []],
      ['emails[type eq "work" and value co "example.com"]', ["bjensen"]],
      ['failedLogins eq 0 and userName eq "bjensen"', ["bjensen"]],
      ['meta.lastModified lt "2011-05-13T04:42:34Z" and userType eq "Employee"', ["jsmith"]],
    ])("answers a filter over the User's own attributes: %s", async (filter, expected) => {
      expect(await select(filter, "&resourcetypes=User")).toEqual(expected);
    });

    it("refuses an order by an attribute no User has; another list of types sorts it last", async () => {
      const problem = problemOf(await usersOnly("sortby=nope"), 400, "validation_failed");
      expect(problem.scimType).toBe("invalidValue");
      expect(problem.errors).toEqual([{ path: "/query/sortby", message: "Users cannot be sorted by 'nope'." }]);
      expect((await usersOnly("sortby=name.familyName")).statusCode).toBe(200);
      expect((await list("sortby=nope")).statusCode).toBe(200);
    });
  });

  describe("hostile filters: 400 invalid_filter, never a 5xx, no data changed", () => {
    async function totalRows() {
      return (await admin("GET", "/Resources?count=0")).json().totalResults as number;
    }
    async function refused(filter: string) {
      const response = await list(`filter=${encodeURIComponent(filter)}`);
      const problem = problemOf(response, 400, "invalid_filter");
      expect(problem.scimType).toBe("invalidFilter");
      expect(problem.errors).toEqual([expect.objectContaining({ path: "/query/filter" })]);
      return problem;
    }

    it("treats SQL metacharacters as data: x' or 1=1 -- matches nothing and the table keeps its rows", async () => {
      const before = await totalRows();
      expect(before).toBe(EVERYONE.length);
      for (const filter of [
        `userName eq "x' or 1=1 --"`,
        `userName eq "x'; DROP TABLE resources; --"`,
        `userName eq "x\\"; DELETE FROM resource_values; --"`,
        `userName co "') or ('1'='1"`,
        `userName sw "%' or '%'='"`,
        `emails[value eq "x' or 1=1 --"]`,
        `userName eq "bjensen" or userName eq "x) union select * from credentials --"`,
      ]) {
        const selected = await select(filter);
        expect(
          selected.filter((n) => n !== "bjensen"),
          filter,
        ).toEqual([]);
      }
      expect(await totalRows()).toBe(before);
      expect(await select('userName eq "bjensen"')).toEqual(["bjensen"]);
    });

    it("refuses a sortby carrying SQL", async () => {
      problemOf(await list(`sortby=${encodeURIComponent("userName; drop table resources")}`), 400, "validation_failed");
      expect(await totalRows()).toBe(EVERYONE.length);
    });

    it.each([
      '(userName eq "x"',
      'userName eq "x")',
      '((userName eq "x")',
      'emails[type eq "work"',
      'emails type eq "work"]',
      'emails[type eq "work"]]',
      ")(",
      "()",
      "[]",
    ])("refuses the unbalanced %j", async (filter) => {
      expect((await refused(filter)).detail).toMatch(/position \d+/);
    });

    it.each(['userName like "x"', 'userName == "x"', 'userName eq "x" xor title pr', 'userName regex "^b"'])(
      "refuses the unknown operator in %j",
      async (filter) => {
        await refused(filter);
      },
    );

    it.each([
      "userName eq",
      'userName eq "x" and',
      "and title pr",
      "title",
      "userName eq bjensen",
      'userName eq "x" "y"',
      "emails[emails[type pr]]",
      "userName gt true",
      "userName co 5",
      "userName gt null",
      'meta.lastModified gt "last tuesday"',
    ])("refuses the malformed %j", async (filter) => {
      await refused(filter);
    });

    it("refuses 10 000-deep nesting", async () => {
      await refused(`${"(".repeat(10_000)}userName eq "x"${")".repeat(10_000)}`);
      await refused(`${"(".repeat(10_000)}`);
    });

    it("accepts 32 levels of parentheses and refuses 33 with the position of the 33rd", async () => {
      expect(await select(`${"(".repeat(32)}userName eq "bjensen"${")".repeat(32)}`)).toEqual(["bjensen"]);
      const problem = await refused(`${"(".repeat(33)}userName eq "bjensen"${")".repeat(33)}`);
      expect(problem.detail).toMatch(/deeper.*position 33\b/);
    });

    it("refuses a long run of not (nesting without parentheses)", async () => {
      await refused(`${"not ".repeat(1500)}userName eq "x"`);
      await refused(`${"not (".repeat(40)}userName eq "x"${")".repeat(40)}`);
      // while many nots side by side are shallow
      const side = Array.from({ length: 40 }, (_, i) => `not (userName eq "u${i}")`).join(" and ");
      expect(await select(`userName eq "bjensen" and ${side}`)).toEqual(["bjensen"]);
    });

    it("refuses a 1 MiB filter", async () => {
      await refused(`userName eq "${"a".repeat(1024 * 1024)}"`);
      await refused(Array.from({ length: 40_000 }, (_, i) => `userName eq "u${i}"`).join(" or "));
    });

    it("accepts a long but shallow filter (300 alternatives)", async () => {
      const filter = Array.from({ length: 300 }, (_, i) => `emails[value eq "u${i}"]`).join(" or ");
      expect(filter.length).toBeLessThan(8192);
      expect(await select(`${filter} or userName eq "sam"`)).toEqual(["sam"]);
    });

    it("refuses 'single quotes' with 400 invalid_filter naming the position", async () => {
      const problem = await refused("userName eq 'bjensen'");
      expect(problem.detail).toMatch(/position 13\b/);
      expect(problem.errors?.[0]?.message).toMatch(/position 13\b/);
    });

    it("names the position of an unexpected token", async () => {
      expect((await refused('userName eq "x" ]')).detail).toMatch(/position 17\b/);
      expect((await refused('userName foo "x"')).detail).toMatch(/position 10\b/);
    });

    it.each(["", "   ", '\u0000userName eq "x"', 'userName eq "x\u0000"', 'userName eq "\n"', "userName\teq\t@", "💥"])(
      "refuses the odd %j",
      async (filter) => {
        await refused(filter);
      },
    );

    it("keeps the rows after all of the above", async () => {
      expect(await totalRows()).toBe(EVERYONE.length);
    });
  });
});

describe("resources list: count bounds over many resources", () => {
  const server = useTestServer();
  const admin = server.call;
  beforeAll(async () => {
    const now = new Date().toISOString();
    await server.app.services.store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 520; i++) {
        await insertResource(trx, {
          id: crypto.randomUUID(),
          resource_type: "Room",
          external_id: null,
          display_name: null,
          user_name_key: null,
          attributes: JSON.stringify({ number: i }),
          created_at: now,
          updated_at: now,
          version: 1,
        });
      }
    });
  });

  it("returns 50 by default", async () => {
    const body = (await admin("GET", "/Resources?resourcetypes=Room")).json();
    expect(body).toMatchObject({ totalResults: 520, startIndex: 1, itemsPerPage: 50 });
  });

  it("caps count above 500 at 500", async () => {
    for (const count of ["501", "999999999"]) {
      const body = (await admin("GET", `/Resources?resourcetypes=Room&count=${count}`)).json();
      expect(body).toMatchObject({ totalResults: 520, itemsPerPage: 500 });
      expect(body.Resources).toHaveLength(500);
    }
    expect((await admin("GET", "/Resources?resourcetypes=Room&count=500")).json().itemsPerPage).toBe(500);
  });

  it("pages through everything in order without repeating or skipping", async () => {
    const seen: number[] = [];
    for (let start = 1; start <= 520; start += 200) {
      const body = (
        await admin("GET", `/Resources?resourcetypes=Room&sortby=number&startindex=${start}&count=200`)
      ).json();
      seen.push(...(body.Resources as Json[]).map((r) => r.number as number));
    }
    expect(seen).toEqual(Array.from({ length: 520 }, (_, i) => i));
    const desc = (
      await admin("GET", "/Resources?resourcetypes=Room&sortby=number&sortorder=descending&count=3")
    ).json();
    expect((desc.Resources as Json[]).map((r) => r.number)).toEqual([519, 518, 517]);
    const filtered = (
      await admin("GET", `/Resources?filter=${encodeURIComponent("number ge 510 or number lt 2")}&sortby=number`)
    ).json();
    expect(filtered.totalResults).toBe(12);
    expect((filtered.Resources as Json[]).map((r) => r.number)).toEqual([
      0, 1, 510, 511, 512, 513, 514, 515, 516, 517, 518, 519,
    ]);
  });
});
