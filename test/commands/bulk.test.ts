import { beforeAll, describe, expect, it } from "vitest";
import { type Env, errorOf, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

/**
 * POST /Bulk through `bizctl api` (run in the test process), embedded and against a server: the examples
 * of RFC 7644 section 3.7 adapted to our schemas (a User's manager stands for the RFC's group
 * member), failOnErrors, and the least-privilege rules applied to each operation.
 */

const BULK_REQUEST = "urn:ietf:params:scim:api:messages:2.0:BulkRequest";
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const SUPPORT_PASSWORD = "amber kettle orbit 5521 willow";

// biome-ignore lint/suspicious/noExplicitAny: the tests assert the shape with expect()
type Json = any;
type Result = { method: string; bulkId?: string; status: string; location?: string; version?: string; response?: Json };

describe.each(MODES)("POST /Bulk (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let support: Env;

  async function bulk(body: unknown, env?: Env): Promise<{ exitCode: number; Operations: Result[]; raw: Json }> {
    const result = await s.run(["api", "POST", "/Bulk", "--data", "-"], {
      input: JSON.stringify(body),
      ...(env && { env }),
    });
    const raw = result.stdout.trim() ? json(result) : undefined;
    return { exitCode: result.exitCode, Operations: raw?.Operations ?? [], raw };
  }

  async function get(path: string): Promise<Json> {
    const result = await s.run(["api", "GET", path]);
    expect(result.exitCode, show(result)).toBe(0);
    return json(result);
  }

  const idOf = (result: Result) => String(result.location).split("/").pop() as string;

  beforeAll(async () => {
    const created = await s.run(["users", "create", "--user-name", "helpdesk", "--role", "support", "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
    const { oneTimePassword } = json(created);
    support = await s.newConfig("support");
    const first = await s.login(support, "helpdesk", oneTimePassword, SUPPORT_PASSWORD);
    expect(first.exitCode, show(first)).toBe(0);
  }, 120_000);

  it("advertises bulk and its limits in /ServiceProviderConfig", async () => {
    const config = await get("/ServiceProviderConfig");
    expect(config.bulk).toEqual({ supported: true, maxOperations: 1000, maxPayloadSize: 1024 * 1024 });
    expect(config.patch).toEqual({ supported: true });
  });

  it("RFC 7644 3.7.1/3.7.2: POST, PUT and DELETE in one request, a bulkId referred to before it is declared", async () => {
    // the resources the PUT and the DELETE act on, with their versions
    const setup = await bulk({
      schemas: [BULK_REQUEST],
      Operations: [
        { method: "POST", path: "/Users", bulkId: "b7c1", data: { schemas: [USER], userName: "bjensen" } },
        { method: "POST", path: "/Resources", bulkId: "e9e3", data: { resourceType: "User", userName: "jsmith" } },
      ],
    });
    expect(setup.Operations.map((o) => o.status)).toEqual(["201", "201"]);
    const [bjensen, jsmith] = setup.Operations as [Result, Result];

    const answer = await bulk({
      schemas: [BULK_REQUEST],
      Operations: [
        // refers to "qwerty", which the next operation creates: it waits for it
        {
          method: "POST",
          path: "/Resources",
          bulkId: "ytrewq",
          data: { schemas: [USER], userName: "alice", manager: { value: "bulkId:qwerty" } },
        },
        { method: "POST", path: "/Users", bulkId: "qwerty", data: { schemas: [USER], userName: "aboss" } },
        {
          method: "PUT",
          path: `/Users/${idOf(bjensen)}`,
          version: bjensen.version,
          data: {
            schemas: [USER],
            userName: "bjensen",
            displayName: "Babs Jensen",
            manager: { value: "bulkId:qwerty" },
          },
        },
        { method: "DELETE", path: `/Resources/${idOf(jsmith)}`, version: jsmith.version },
      ],
    });
    expect(answer.exitCode).toBe(0);
    expect(answer.raw.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:BulkResponse"]);
    expect(answer.Operations.map((o) => [o.method, o.bulkId, o.status])).toEqual([
      ["POST", "ytrewq", "201"],
      ["POST", "qwerty", "201"],
      ["PUT", undefined, "200"],
      ["DELETE", undefined, "204"],
    ]);
    const boss = idOf(answer.Operations[1]!);
    expect((await get(`/Resources/${idOf(answer.Operations[0]!)}`)).manager).toEqual({ value: boss });
    const babs = await get(`/Resources/${idOf(bjensen)}`);
    expect([babs.displayName, babs.manager]).toEqual(["Babs Jensen", { value: boss }]);
    const gone = await s.run(["api", "GET", `/Resources/${idOf(jsmith)}`]);
    expect(gone.exitCode).toBe(3);
  });

  it("RFC 7644 3.7.3: failOnErrors stops after that many failures; without it every operation runs", async () => {
    const operations = [
      { method: "POST", path: "/Users", bulkId: "one", data: { schemas: [USER], userName: "dup" } },
      { method: "POST", path: "/Users", bulkId: "two", data: { schemas: [USER], userName: "dup" } },
      { method: "POST", path: "/Users", bulkId: "three", data: { schemas: [USER], userName: "" } },
      { method: "POST", path: "/Users", bulkId: "four", data: { schemas: [USER], userName: "after-errors" } },
    ];
    // the same request three times: "dup" exists after the first, so its POSTs conflict later on
    const rounds = [
      { failOnErrors: 1, statuses: ["201", "409"], afterErrorsExists: false },
      { failOnErrors: 2, statuses: ["409", "409"], afterErrorsExists: false },
      { failOnErrors: undefined, statuses: ["409", "409", "400", "201"], afterErrorsExists: true },
    ];
    for (const { failOnErrors, statuses, afterErrorsExists } of rounds) {
      const answer = await bulk({
        schemas: [BULK_REQUEST],
        ...(failOnErrors !== undefined && { failOnErrors }),
        Operations: operations,
      });
      expect(answer.exitCode).toBe(0);
      expect(
        answer.Operations.map((o) => o.status),
        `failOnErrors ${failOnErrors}`,
      ).toEqual(statuses);
      const found = json(await s.run(["users", "list", "--filter", 'userName eq "after-errors"', "--json"]));
      expect(found.length, `failOnErrors ${failOnErrors}`).toBe(afterErrorsExists ? 1 : 0);
    }
    const after = await bulk({ schemas: [BULK_REQUEST], Operations: [] });
    expect(after.Operations).toEqual([]);
  });

  /** A Bulk operation that creates the User `userName` whose manager is `manager`. */
  const postUser = (bulkId: string, userName: string, manager: string) => ({
    method: "POST",
    path: "/Users",
    bulkId,
    data: { schemas: [USER], userName, manager: { value: manager } },
  });

  it("answers each failure with a SCIM error carrying our problem code", async () => {
    const answer = await bulk({
      schemas: [BULK_REQUEST],
      Operations: [
        {
          method: "POST",
          path: "/Users",
          bulkId: "bad",
          data: { schemas: [USER], userName: "x", emails: [{ value: "nope" }] },
        },
        postUser("child", "y", "bulkId:bad"),
        postUser("orphan", "z", "bulkId:nobody"),
        postUser("a", "c1", "bulkId:b"),
        postUser("b", "c2", "bulkId:a"),
        { method: "GET", path: "/Users/whatever" },
        { method: "POST", path: "/Events", bulkId: "e", data: {} },
        { method: "POST", path: "/Users", data: { schemas: [USER], userName: "no-bulk-id" } },
      ],
    });
    const brief = answer.Operations.map((o) => [
      o.bulkId ?? o.method,
      o.status,
      o.response?.code,
      o.response?.scimType,
    ]);
    expect(brief).toEqual([
      ["bad", "400", "validation_failed", "invalidValue"],
      ["child", "409", "conflict", "invalidValue"],
      ["orphan", "409", "conflict", "invalidValue"],
      ["a", "409", "conflict", "invalidValue"],
      ["b", "409", "conflict", "invalidValue"],
      ["GET", "405", "method_not_allowed", undefined],
      ["e", "404", "not_found", undefined],
      ["POST", "400", "validation_failed", "invalidSyntax"],
    ]);
    expect(answer.Operations[0]!.response.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
  });

  it("refuses more than maxOperations (413), a duplicate bulkId and a request without the BulkRequest schema", async () => {
    const many = Array.from({ length: 1001 }, (_, i) => ({ method: "DELETE", path: `/Resources/n${i}` }));
    const cases = [
      { body: { schemas: [BULK_REQUEST], Operations: many }, exit: 7, code: "payload_too_large" },
      {
        body: {
          schemas: [BULK_REQUEST],
          Operations: [
            { method: "POST", path: "/Users", bulkId: "twice", data: { schemas: [USER], userName: "t1" } },
            { method: "POST", path: "/Users", bulkId: "twice", data: { schemas: [USER], userName: "t2" } },
          ],
        },
        exit: 7,
        code: "validation_failed",
      },
      { body: { schemas: [], Operations: [] }, exit: 7, code: "validation_failed" },
    ];
    for (const { body, exit, code } of cases) {
      const result = await s.run(["api", "POST", "/Bulk", "--data", "-"], { input: JSON.stringify(body) });
      expect([result.exitCode, errorOf(result).code], show(result)).toEqual([exit, code]);
    }
    // nothing of the refused request was written
    const users = await s.run(["users", "list", "--filter", 'userName sw "t"', "--json"]);
    expect(json(users)).toEqual([]);
  });

  it("applies the least-privilege rules to each operation of support staff", async () => {
    const admin = await bulk({
      schemas: [BULK_REQUEST],
      Operations: [
        {
          method: "POST",
          path: "/Users",
          bulkId: "m",
          data: { schemas: [USER], userName: "member1", emails: [{ value: "m1@example.com" }] },
        },
        {
          method: "POST",
          path: "/Users",
          bulkId: "adm",
          data: {
            schemas: [USER],
            userName: "admin2",
            emails: [{ value: "a2@example.com" }],
            roles: [{ value: "admin" }],
          },
        },
      ],
    });
    const [member, otherAdmin] = admin.Operations.map(idOf) as [string, string];
    const answer = await bulk(
      {
        schemas: [BULK_REQUEST],
        Operations: [
          { method: "POST", path: "/Users", bulkId: "x", data: { schemas: [USER], userName: "by-support" } },
          { method: "POST", path: `/Resources/${member}/invitation`, bulkId: "i1" },
          { method: "POST", path: `/Resources/${otherAdmin}/invitation`, bulkId: "i2" },
          { method: "DELETE", path: `/Resources/${member}` },
        ],
      },
      support,
    );
    expect(answer.Operations.map((o) => [o.status, o.response?.code])).toEqual([
      ["403", "forbidden"],
      ["202", undefined],
      ["403", "forbidden"],
      ["403", "forbidden"],
    ]);
    expect(answer.Operations[1]!.response).toMatchObject({ status: "queued", email: "m1@example.com" });
    const users = json(await s.run(["users", "list", "--filter", 'userName eq "by-support"', "--json"]));
    expect(users).toEqual([]);
  });
});
