/**
 * A provisioning run as Microsoft Entra ID makes it, over a real socket, on SQLite and PostgreSQL.
 * The requests are those Microsoft documents for its provisioning service ("Develop and plan
 * provisioning for a SCIM endpoint": User operations; "Known issues with SCIM 2.0 protocol
 * compliance": the PATCH shapes it sends with and without its compliance flag): test the
 * connection, look the user up, create it, read it, find it by userName, externalId and work
 * e-mail, update it with PATCH, disable it, delete it. Each step is a row; they run in order.
 */
import { describe, expect, it } from "vitest";
import {
  DATABASES,
  ENTERPRISE_SCHEMA,
  LIST_RESPONSE,
  type PatchOperation,
  patchOf,
  SCIM_MEDIA_TYPE,
  type ScimServer,
  scimErrorOf,
  USER_SCHEMA,
  useScimServer,
  type Wire,
} from "../helpers/scim.js";

const EXTERNAL_ID = "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef";
const USER_NAME = "Test_User_00aa00aa-bb11-cc22-dd33-44ee44ee44ee";
const WORK_EMAIL = "Test_User_11bb11bb-cc22-dd33-ee44-55ff55ff55ff@testuser.com";

/** Entra ID's Create User request, as Microsoft documents it. */
const CREATE_USER = {
  schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
  externalId: EXTERNAL_ID,
  userName: USER_NAME,
  active: true,
  emails: [{ primary: true, type: "work", value: WORK_EMAIL }],
  meta: { resourceType: "User" },
  name: { formatted: "givenName familyName", familyName: "familyName", givenName: "givenName" },
  roles: [],
};

const filter = (expression: string) => `/Users?filter=${encodeURIComponent(expression)}`;

interface Run {
  scim: ScimServer;
  id: string;
  etag: string;
}

/** Step["request"] of a PATCH of the run's user with these operations */
const patchUser =
  (...operations: PatchOperation[]) =>
  (run: Run): ReturnType<Step["request"]> => ["PATCH", `/Users/${run.id}`, patchOf(...operations)];
/** the same, sent with the If-Match of the run's last ETag */
const patchUserIfMatch =
  (...operations: PatchOperation[]) =>
  (run: Run): ReturnType<Step["request"]> => [
    "PATCH",
    `/Users/${run.id}`,
    patchOf(...operations),
    { "if-match": run.etag },
  ];

const NEW_USER_NAME = "5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com";

interface Step {
  request: (run: Run) => [method: string, path: string, body?: unknown, headers?: Record<string, string>];
  expect: (answer: Wire, run: Run) => void;
}

const listOf = (answer: Wire, total: number) => {
  expect(answer.status, answer.text).toBe(200);
  expect(answer.headers["content-type"]).toBe(`${SCIM_MEDIA_TYPE}; charset=utf-8`);
  const list = answer.json();
  expect(list).toMatchObject({ schemas: [LIST_RESPONSE], totalResults: total, startIndex: 1 });
  expect(list.Resources).toHaveLength(total);
  return list.Resources;
};

const userOf = (answer: Wire, status = 200) => {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers["content-type"]).toBe(`${SCIM_MEDIA_TYPE}; charset=utf-8`);
  return answer.json();
};

/** The steps of the run: [what Entra ID does, the step]. */
const STEPS: [string, Step][] = [
  [
    "Test Connection: a user that does not exist, by a random GUID: an empty ListResponse",
    {
      request: () => ["GET", filter(`userName eq "${crypto.randomUUID()}"`)],
      expect: (answer) => expect(listOf(answer, 0)).toEqual([]),
    },
  ],
  [
    "looks the user up by its matching attribute, externalId, before creating it: none",
    {
      request: () => ["GET", filter(`externalId eq "${EXTERNAL_ID}"`)],
      expect: (answer) => listOf(answer, 0),
    },
  ],
  [
    "Create User: 201 with the user, its id, Location and ETag",
    {
      request: () => ["POST", "/Users", CREATE_USER],
      expect: (answer, run) => {
        const user = userOf(answer, 201);
        run.id = user.id;
        run.etag = String(answer.headers.etag);
        expect(user).toMatchObject({
          schemas: expect.arrayContaining([USER_SCHEMA]),
          externalId: EXTERNAL_ID,
          userName: USER_NAME,
          name: CREATE_USER.name,
          active: true,
          emails: CREATE_USER.emails,
          meta: { resourceType: "User", location: `/Users/${user.id}` },
        });
        expect(typeof user.id).toBe("string");
        expect(answer.headers.location).toBe(`/Users/${user.id}`);
        expect(answer.headers.etag).toBe(user.meta.version);
        // an empty multi-valued attribute is unassigned (RFC 7643 section 2.5): the default role
        expect(user.roles).toEqual([{ value: "member", primary: true }]);
      },
    },
  ],
  [
    "creating it again is 409 uniqueness, a SCIM error",
    {
      request: () => ["POST", "/Users", CREATE_USER],
      expect: (answer) => expect(scimErrorOf(answer, 409, "uniqueness").code).toBe("conflict"),
    },
  ],
  [
    "Get User by id",
    {
      request: (run) => ["GET", `/Users/${run.id}`],
      expect: (answer, run) => {
        expect(userOf(answer)).toMatchObject({ id: run.id, userName: USER_NAME, externalId: EXTERNAL_ID });
        expect(answer.headers.etag).toBe(run.etag);
      },
    },
  ],
  [
    "Get User by query: userName eq, in any case",
    {
      request: () => ["GET", filter(`userName eq "${USER_NAME.toLowerCase()}"`)],
      expect: (answer, run) => expect(listOf(answer, 1)[0]).toMatchObject({ id: run.id, userName: USER_NAME }),
    },
  ],
  [
    "Get User by query: externalId eq",
    {
      request: () => ["GET", filter(`externalId eq "${EXTERNAL_ID}"`)],
      expect: (answer, run) => expect(listOf(answer, 1)[0].id).toBe(run.id),
    },
  ],
  [
    'Get User by query: emails[type eq "work"].value eq, and userName with and',
    {
      request: () => ["GET", filter(`emails[type eq "work"].value eq "${WORK_EMAIL}" and userName eq "${USER_NAME}"`)],
      expect: (answer, run) => expect(listOf(answer, 1)[0].id).toBe(run.id),
    },
  ],
  [
    "Get User by query - zero results",
    {
      request: () => ["GET", filter('userName eq "non-existent user"')],
      expect: (answer) => listOf(answer, 0),
    },
  ],
  [
    "pages as it lists, with startIndex and count in camelCase",
    {
      request: () => ["GET", "/Users?startIndex=1&count=1&sortBy=userName"],
      expect: (answer) => {
        expect(answer.status, answer.text).toBe(200);
        expect(answer.json()).toMatchObject({ totalResults: 2, itemsPerPage: 1, startIndex: 1 });
      },
    },
  ],
  [
    "Update User [Multi-valued properties]: Replace a work e-mail by value filter, and name.familyName",
    {
      request: patchUser(
        { op: "Replace", path: 'emails[type eq "work"].value', value: "updatedEmail@microsoft.com" },
        { op: "Replace", path: "name.familyName", value: "updatedFamilyName" },
      ),
      expect: (answer, run) => {
        const user = userOf(answer);
        expect(user).toMatchObject({
          id: run.id,
          name: { familyName: "updatedFamilyName", givenName: "givenName" },
          emails: [{ value: "updatedEmail@microsoft.com", type: "work", primary: true }],
        });
        expect(answer.headers.etag).not.toBe(run.etag);
        run.etag = String(answer.headers.etag);
      },
    },
  ],
  [
    "Update User [Single-valued properties]: Replace userName",
    {
      request: patchUser({ op: "Replace", path: "userName", value: NEW_USER_NAME }),
      expect: (answer) => expect(userOf(answer).userName).toBe(NEW_USER_NAME),
    },
  ],
  [
    "replace multiple attributes as Entra ID sends them without its compliance flag",
    {
      request: patchUser(
        { op: "Replace", path: "displayName", value: "Pvlo" },
        { op: "Replace", path: 'emails[type eq "work"].value', value: "TestBcwqnm@test.microsoft.com" },
        { op: "Replace", path: "name.givenName", value: "Gtfd" },
        { op: "Replace", path: "name.familyName", value: "Pkqf" },
        { op: "Replace", path: "externalId", value: "Eqpj" },
        { op: "Replace", path: `${ENTERPRISE_SCHEMA}:employeeNumber`, value: "Eqpj" },
      ),
      expect: (answer) =>
        expect(userOf(answer)).toMatchObject({
          schemas: expect.arrayContaining([USER_SCHEMA, ENTERPRISE_SCHEMA]),
          displayName: "Pvlo",
          externalId: "Eqpj",
          name: { givenName: "Gtfd", familyName: "Pkqf" },
          emails: [{ value: "TestBcwqnm@test.microsoft.com", type: "work" }],
          [ENTERPRISE_SCHEMA]: { employeeNumber: "Eqpj" },
        }),
    },
  ],
  [
    "and with its compliance flag: a replace without a path whose members are paths",
    {
      request: patchUser(
        { op: "replace", path: 'emails[type eq "work"].value', value: "TestMhvaes@test.microsoft.com" },
        {
          op: "replace",
          value: {
            displayName: "Bjfe",
            "name.givenName": "Kkom",
            "name.familyName": "Unua",
            [`${ENTERPRISE_SCHEMA}:employeeNumber`]: "Aklq",
          },
        },
      ),
      expect: (answer) =>
        expect(userOf(answer)).toMatchObject({
          displayName: "Bjfe",
          name: { givenName: "Kkom", familyName: "Unua" },
          emails: [{ value: "TestMhvaes@test.microsoft.com" }],
          [ENTERPRISE_SCHEMA]: { employeeNumber: "Aklq" },
        }),
    },
  ],
  [
    "add a single-value string attribute: Add nickName",
    {
      request: patchUser({ op: "Add", path: "nickName", value: "Babs" }),
      expect: (answer) => expect(userOf(answer).nickName).toBe("Babs"),
    },
  ],
  [
    "add a mobile phone through a value filter that selects nothing yet: the element is made",
    {
      request: patchUser({ op: "Add", path: 'phoneNumbers[type eq "mobile"].value', value: "555-555-4444" }),
      expect: (answer) => expect(userOf(answer).phoneNumbers).toEqual([{ type: "mobile", value: "555-555-4444" }]),
    },
  ],
  [
    "update the manager as Entra ID sends it: Add manager with a list of one reference",
    {
      request: patchUser({
        op: "Add",
        path: "manager",
        value: [{ $ref: "http://example.com/scim/Users/00aa00aa", value: "00aa00aa-bb11-cc22-dd33-44ee44ee44ee" }],
      }),
      expect: (answer) =>
        expect(userOf(answer)[ENTERPRISE_SCHEMA].manager).toEqual({
          $ref: "http://example.com/scim/Users/00aa00aa",
          value: "00aa00aa-bb11-cc22-dd33-44ee44ee44ee",
        }),
    },
  ],
  [
    "query the manager before updating it: id eq and manager eq",
    {
      request: (run) => ["GET", filter(`id eq "${run.id}" and manager eq "00aa00aa-bb11-cc22-dd33-44ee44ee44ee"`)],
      expect: (answer, run) => expect(listOf(answer, 1)[0].id).toBe(run.id),
    },
  ],
  [
    "a PATCH with a stale If-Match: 412, nothing changed",
    {
      request: patchUserIfMatch({ op: "Replace", path: "title", value: "Lost" }),
      expect: (answer) => expect(scimErrorOf(answer, 412).code).toBe("precondition_failed"),
    },
  ],
  [
    'Disable User as Entra ID sends it without its flag: Replace active "False"',
    {
      request: patchUser({ op: "Replace", path: "active", value: "False" }),
      expect: (answer, run) => {
        expect(userOf(answer).active).toBe(false);
        expect(userOf(answer).title).toBeUndefined();
        run.etag = String(answer.headers.etag);
      },
    },
  ],
  [
    "a GET with a filter still finds the disabled user, with active false",
    {
      request: () => ["GET", filter(`userName eq "${NEW_USER_NAME}"`)],
      expect: (answer) => expect(listOf(answer, 1)[0].active).toBe(false),
    },
  ],
  [
    "enable it again with the current If-Match: Replace active true",
    {
      request: patchUserIfMatch({ op: "replace", path: "active", value: true }),
      expect: (answer) => expect(userOf(answer).active).toBe(true),
    },
  ],
  [
    "Disable User as Entra ID sends it with its flag: replace active false",
    {
      request: patchUser({ op: "replace", path: "active", value: false }),
      expect: (answer) => expect(userOf(answer).active).toBe(false),
    },
  ],
  [
    "Delete User: 204",
    {
      request: (run) => ["DELETE", `/Users/${run.id}`],
      expect: (answer) => expect(answer.status, answer.text).toBe(204),
    },
  ],
  [
    "the user is gone: 404, a SCIM error",
    {
      request: (run) => ["GET", `/Users/${run.id}`],
      expect: (answer) => expect(scimErrorOf(answer, 404).code).toBe("not_found"),
    },
  ],
];

describe.each(DATABASES)("an Entra-ID-style provisioning run ($name)", ({ start }) => {
  const run: Run = { scim: useScimServer(start), id: "", etag: "" };

  it.each(STEPS)("%s", async (_what, step) => {
    const [method, path, body, headers] = step.request(run);
    step.expect(await run.scim.call(method, path, body, headers), run);
  });

  it("wrote each change to the audit trail as /Resources would", async () => {
    const audit = await run.scim.call("GET", `/audit?filter=${encodeURIComponent(`target.id eq "${run.id}"`)}`);
    expect(audit.status, audit.text).toBe(200);
    const actions = audit.json().data.map((record: { action: string }) => record.action);
    expect(actions).toEqual(
      expect.arrayContaining(["user.create", "user.update", "user.disable", "user.enable", "user.delete"]),
    );
  });
});
