/**
 * Consecutive creates of a /Bulk request share a commit, each in a savepoint: every operation
 * keeps the outcome it would have alone. A failed create undoes itself only, in whichever run of
 * a hundred it falls; failOnErrors keeps what ran before it; what is not a create (or sets a
 * password) runs on its own and sees what the creates before it wrote. The kept totals agree
 * with a counted one afterwards. On SQLite and PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { BULK_URN } from "../../src/contract/bulk.js";
import { STORES } from "../helpers/postgres.js";
import { useTestServer } from "../helpers/server.js";

interface Operation {
  method: string;
  path: string;
  bulkId?: string;
  data?: unknown;
}

interface Scenario {
  name: string;
  operations: (prefix: string) => Operation[];
  failOnErrors?: number;
  /** the status of each operation answered, in order */
  statuses: string[];
  /** Users of the prefix afterwards */
  stored: number;
}

const create = (prefix: string, i: number, extra: Record<string, unknown> = {}): Operation => ({
  method: "POST",
  path: "/Users",
  bulkId: `u${i}`,
  data: { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: `${prefix}-${i}`, ...extra },
});

const creates = (prefix: string, from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => create(prefix, from + i));

const repeat = (prefix: string, of: number, bulkId: string): Operation => ({ ...create(prefix, of), bulkId });

const times = (n: number, status: string) => Array.from({ length: n }, () => status);

const SCENARIOS: Scenario[] = [
  {
    name: "250 creates, two repeating an earlier userName, in the first and the second hundred",
    operations: (p) => [
      ...creates(p, 0, 50),
      repeat(p, 3, "again-3"),
      ...creates(p, 50, 149),
      repeat(p, 120, "again-120"),
      ...creates(p, 149, 248),
    ],
    statuses: [...times(50, "201"), "409", ...times(99, "201"), "409", ...times(99, "201")],
    stored: 248,
  },
  {
    name: "failOnErrors 1: what ran before the failure stays, nothing after it runs",
    operations: (p) => [...creates(p, 0, 130), repeat(p, 7, "again-7"), ...creates(p, 130, 160)],
    failOnErrors: 1,
    statuses: [...times(130, "201"), "409"],
    stored: 130,
  },
  {
    name: "a PATCH of a resource created in the same request, between creates",
    operations: (p) => [
      ...creates(p, 0, 3),
      {
        method: "PATCH",
        path: "/Users/bulkId:u1",
        data: {
          schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
          Operations: [{ op: "replace", path: "displayName", value: "Patched" }],
        },
      },
      ...creates(p, 3, 6),
    ],
    statuses: [...times(3, "201"), "200", ...times(3, "201")],
    stored: 6,
  },
  {
    name: "a create that sets a password, between creates",
    operations: (p) => [
      ...creates(p, 0, 3),
      create(p, 3, { password: "a long enough Passw0rd for this policy" }),
      ...creates(p, 4, 6),
    ],
    statuses: times(6, "201"),
    stored: 6,
  },
];

describe.each(STORES)("bulk creates sharing commits on %s", (_store, start) => {
  const server = useTestServer({}, start);
  let counter = 0;

  const totalOf = async (query: string) => {
    const answer = await server.call("GET", `/Resources?${query}`);
    expect(answer.statusCode, answer.body).toBe(200);
    return (answer.json() as { totalResults: number }).totalResults;
  };

  it.each(SCENARIOS)("$name", async ({ operations, failOnErrors, statuses, stored }) => {
    const prefix = `bulk${++counter}-${crypto.randomUUID().slice(0, 6)}`;
    const answer = await server.call("POST", "/Bulk", {
      schemas: [BULK_URN.request],
      ...(failOnErrors !== undefined && { failOnErrors }),
      Operations: operations(prefix),
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const results = (answer.json() as { Operations: { status: string; response?: { scimType?: string } }[] })
      .Operations;
    expect(results.map((r) => r.status)).toEqual(statuses);
    for (const failed of results.filter((r) => r.status === "409"))
      expect(failed.response?.scimType).toBe("uniqueness");
    const filter = encodeURIComponent(`userName sw "${prefix}-"`);
    expect(await totalOf(`resourcetypes=User&filter=${filter}&count=0`)).toBe(stored);
    // the kept total of the type moved with the rows that stayed, not with those undone
    expect(await totalOf("resourcetypes=User&count=0")).toBe(
      await totalOf(`resourcetypes=User&count=0&filter=${encodeURIComponent("id pr")}`),
    );
  });

  type Answered = { status: string; location?: string; response?: Record<string, unknown> }[];
  const bulk = async (operations: Operation[]) => {
    const answer = await server.call("POST", "/Bulk", { schemas: [BULK_URN.request], Operations: operations });
    expect(answer.statusCode, answer.body).toBe(200);
    return (answer.json() as { Operations: Answered }).Operations;
  };

  it("fails a create whose userName or externalId is taken, stored or earlier in the run, with the problem of its single request", async () => {
    const prefix = `taken${++counter}-${crypto.randomUUID().slice(0, 6)}`;
    const stored = await server.call("POST", "/Users", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: `${prefix}-stored`,
      externalId: `${prefix}-ext`,
    });
    expect(stored.statusCode, stored.body).toBe(201);
    // what POST /Users answers alone for each taken key
    const alone = async (data: Record<string, unknown>) => {
      const answer = await server.call("POST", "/Users", {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        ...data,
      });
      expect(answer.statusCode).toBe(409);
      const { detail, scimType, code } = answer.json() as Record<string, unknown>;
      return { status: "409", detail, scimType, code };
    };
    const results = await bulk([
      create(prefix, 0),
      create(prefix, 1, { userName: `${prefix.toUpperCase()}-STORED` }),
      create(prefix, 2, { externalId: `${prefix}-ext` }),
      create(prefix, 3),
      create(prefix, 4, { userName: `${prefix}-0` }),
      create(prefix, 5, { externalId: `${prefix}-ext-5` }),
      create(prefix, 6, { externalId: `${prefix}-ext-5` }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["201", "409", "409", "201", "409", "201", "409"]);
    const problem = (i: number) => {
      const { detail, scimType, code, status } = results[i]?.response ?? {};
      return { status, detail, scimType, code };
    };
    expect(problem(1)).toEqual(await alone({ userName: `${prefix.toUpperCase()}-STORED` }));
    expect(problem(2)).toEqual(await alone({ userName: `${prefix}-x2`, externalId: `${prefix}-ext` }));
    expect(problem(4)).toEqual(await alone({ userName: `${prefix}-0` }));
    expect(problem(6)).toEqual(await alone({ userName: `${prefix}-x6`, externalId: `${prefix}-ext-5` }));
    const filter = encodeURIComponent(`userName sw "${prefix}-"`);
    expect(await totalOf(`resourcetypes=User&filter=${filter}&count=0`)).toBe(4);
  });

  it("creates each userName once when two requests of the same creates run at once", async () => {
    const prefix = `race${++counter}-${crypto.randomUUID().slice(0, 6)}`;
    const [first, second] = await Promise.all([bulk(creates(prefix, 0, 150)), bulk(creates(prefix, 0, 150))]);
    const statuses = [...(first ?? []), ...(second ?? [])].map((r) => r.status);
    expect(statuses.filter((s) => s === "201")).toHaveLength(150);
    expect(statuses.filter((s) => s === "409")).toHaveLength(150);
    for (let i = 0; i < 150; i++) expect([first?.[i]?.status, second?.[i]?.status].sort()).toEqual(["201", "409"]);
    const filter = encodeURIComponent(`userName sw "${prefix}-"`);
    expect(await totalOf(`resourcetypes=User&filter=${filter}&count=0`)).toBe(150);
  });

  it("writes one audit record per created user, none for an undone one", async () => {
    const prefix = `audit${++counter}-${crypto.randomUUID().slice(0, 6)}`;
    const answer = await server.call("POST", "/Bulk", {
      schemas: [BULK_URN.request],
      Operations: [...creates(prefix, 0, 5), repeat(prefix, 2, "again"), ...creates(prefix, 5, 8)],
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const filter = encodeURIComponent(`action eq "user.create" and target.name sw "${prefix}-"`);
    const audit = await server.call("GET", `/audit?filter=${filter}&pagesize=100`);
    expect(audit.statusCode, audit.body).toBe(200);
    const names = (audit.json() as { data: { target?: { name?: string } }[] }).data.map((r) => r.target?.name);
    expect(names.sort()).toEqual(Array.from({ length: 8 }, (_, i) => `${prefix}-${i}`).sort());
  });
});
