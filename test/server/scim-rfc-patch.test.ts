/**
 * The PATCH examples of RFC 7644 section 3.5.2, sent as the RFC prints them, over a real socket on
 * SQLite and PostgreSQL: those on a User through /Users, those on a Group's members through
 * /Resources, where Groups are resources too (spec 1.9), the RFC's member ids standing for Users
 * made for the test. Each answers 200 with the resource as the RFC describes the change.
 */
import { describe, expect, it } from "vitest";
import { FULL_USER } from "../fixtures/scim-rfc-examples.js";
import { DATABASES, type PatchOperation, patchOf, USER_SCHEMA, useScimServer } from "../helpers/scim.js";

type Json = Record<string, unknown>;

/** RFC 7643 section 8.2's bjensen, as far as the examples need her: her work e-mail, her two addresses */
const BJENSEN = {
  schemas: [USER_SCHEMA],
  userName: "bjensen",
  emails: [FULL_USER.emails[0]],
  addresses: FULL_USER.addresses.map(({ formatted: _formatted, ...address }) => address),
};

/** RFC 7644 section 3.5.2.3's new work address */
const NEW_WORK_ADDRESS = {
  type: "work",
  streetAddress: "911 Universal City Plaza",
  locality: "Hollywood",
  region: "CA",
  postalCode: "91608",
  country: "US",
  formatted: "911 Universal City Plaza\nHollywood, CA 91608 US",
  primary: true,
};

const BABS = {
  display: "Babs Jensen",
  $ref: "https://example.com/v2/Users/2819c223...413861904646",
  value: "2819c223-7f76-453a-919d-413861904646",
};
const JAMES = {
  display: "James Smith",
  $ref: "https://example.com/v2/Users/08e1d05d...473d93df9210",
  value: "08e1d05d...473d93df9210",
};
const TOUR_GUIDES = {
  resourceType: "Group",
  displayName: "Tour Guides",
  members: [
    { display: "Babs Jensen", value: "2819c223-7f76-...413861904646" },
    { display: "Mandy Pepperidge", value: "902c246b-6245-4190-8e05-00816be7344a" },
  ],
};

/** [section, the operations as the RFC prints them, what the User holds afterwards] */
const ON_USERS: [string, PatchOperation[], (user: Json) => void][] = [
  [
    "3.5.2.1: add without a path, two e-mails and a nickname",
    [{ op: "add", value: { emails: [{ value: "babs@jensen.org", type: "home" }], nickname: "Babs" } }],
    (user) => {
      expect(user.emails).toEqual([...BJENSEN.emails, { value: "babs@jensen.org", type: "home" }]);
      expect(user.nickName).toBe("Babs");
    },
  ],
  [
    '3.5.2.2: remove emails[type eq "work" and value ew "example.com"]',
    [{ op: "remove", path: 'emails[type eq "work" and value ew "example.com"]' }],
    (user) => expect(user.emails).toBeUndefined(),
  ],
  [
    "3.5.2.3: replace without a path, every e-mail and the nickname",
    [
      {
        op: "replace",
        value: { emails: FULL_USER.emails, nickname: "Babs" },
      },
    ],
    (user) => {
      expect(user.emails).toEqual(FULL_USER.emails);
      expect(user.nickName).toBe("Babs");
    },
  ],
  [
    '3.5.2.3: replace addresses[type eq "work"], the whole work address',
    [
      {
        op: "replace",
        path: 'addresses[type eq "work"]',
        value: NEW_WORK_ADDRESS,
      },
    ],
    (user) => expect(user.addresses).toEqual([NEW_WORK_ADDRESS, BJENSEN.addresses[1]]),
  ],
  [
    '3.5.2.3: replace addresses[type eq "work"].streetAddress',
    [{ op: "replace", path: 'addresses[type eq "work"].streetAddress', value: "1010 Broadway Ave" }],
    (user) =>
      expect(user.addresses).toEqual([
        { ...BJENSEN.addresses[0], streetAddress: "1010 Broadway Ave" },
        BJENSEN.addresses[1],
      ]),
  ],
];

/** The Users the RFC's member ids (some shortened with "...") stand for. */
const MEMBER_IDS: Record<string, string> = {
  "2819c223-7f76-...413861904646": "babs",
  "2819c223-7f76-453a-919d-413861904646": "babs",
  "902c246b-6245-4190-8e05-00816be7344a": "mandy",
  "08e1d05d...473d93df9210": "james",
  "08e1d05d-121c-4561-8b96-473d93df9210": "james",
};

/** [section, the operations, the members afterwards] */
const ON_GROUPS: [string, PatchOperation[], unknown][] = [
  ["3.5.2.1: add a member", [{ op: "add", path: "members", value: [BABS] }], [...TOUR_GUIDES.members, BABS]],
  ["3.5.2.2: remove every member", [{ op: "remove", path: "members" }], []],
  [
    "3.5.2.2: remove one member by value",
    [{ op: "remove", path: 'members[value eq "2819c223-7f76-...413861904646"]' }],
    [TOUR_GUIDES.members[1]],
  ],
  [
    '3.5.2.2: remove one member and add another (the RFC writes eq"…" without a space)',
    [
      { op: "remove", path: 'members[value eq"2819c223-7f76-...413861904646"]' },
      { op: "add", path: "members", value: [JAMES] },
    ],
    [TOUR_GUIDES.members[1], JAMES],
  ],
  [
    "3.5.2.3: replace every member, a remove and an add",
    [
      { op: "remove", path: "members" },
      {
        op: "add",
        path: "members",
        value: [
          { ...BABS, value: "2819c223-7f76-453a-919d-413861904646" },
          { ...JAMES, value: "08e1d05d-121c-4561-8b96-473d93df9210" },
        ],
      },
    ],
    [
      { ...BABS, value: "2819c223-7f76-453a-919d-413861904646" },
      { ...JAMES, value: "08e1d05d-121c-4561-8b96-473d93df9210" },
    ],
  ],
];

describe.each(DATABASES)("RFC 7644 section 3.5.2, the PATCH examples ($name)", ({ start }) => {
  // each case creates its User again after deleting it: nothing kept to hold the name
  const scim = useScimServer(start, { retainDeletedDays: 0 });

  it.each(ON_USERS)("on a User, %s", async (_what, operations, holds) => {
    const created = await scim.call("POST", "/Users", BJENSEN);
    expect(created.status, created.text).toBe(201);
    const id = created.json().id;
    const answer = await scim.call("PATCH", `/Users/${id}`, patchOf(...operations));
    expect(answer.status, answer.text).toBe(200);
    holds(answer.json());
    // what the answer shows is what is stored
    holds((await scim.call("GET", `/Users/${id}`)).json());
    expect((await scim.call("DELETE", `/Users/${id}`)).status).toBe(204);
  });

  const users = new Map<string, string>();
  /** The text with each of the RFC's member ids made the id of the User it stands for. */
  const withUsers = (value: unknown) => {
    let text = JSON.stringify(value);
    for (const [documented, name] of Object.entries(MEMBER_IDS)) text = text.split(documented).join(users.get(name));
    return JSON.parse(text);
  };
  // a group holds a User once: the RFC's add of a member already there leaves one
  const namesOf = (members: unknown) => [
    ...new Set(
      ((members ?? []) as { value: string }[])
        .map((member) => [...users].find(([, id]) => id === member.value)?.[0] ?? member.value)
        .sort(),
    ),
  ];

  it.each(ON_GROUPS)("on a Group's members, %s", async (_what, operations, members) => {
    for (const name of ["babs", "mandy", "james"]) {
      if (users.has(name)) continue;
      const made = await scim.call("POST", "/Users", { schemas: [USER_SCHEMA], userName: `rfc.${name}` });
      expect(made.status, made.text).toBe(201);
      users.set(name, made.json().id);
    }
    const created = await scim.call("POST", "/Resources", withUsers(TOUR_GUIDES), {
      "content-type": "application/json",
    });
    expect(created.status, created.text).toBe(201);
    const id = created.json().id;
    const answer = await scim.call("PATCH", `/Resources/${id}`, withUsers(patchOf(...operations)));
    expect(answer.status, answer.text).toBe(200);
    expect(String(answer.headers["content-type"])).toMatch(/^application\/json/);
    expect(namesOf(answer.json().members)).toEqual(namesOf(withUsers(members)));
    expect(answer.json().displayName).toBe("Tour Guides");
    expect(answer.headers.etag).toBe(answer.json().meta.version);
    // a group's name is unique: the next example makes Tour Guides again
    expect((await scim.call("DELETE", `/Resources/${id}`)).status).toBe(204);
  });
});
