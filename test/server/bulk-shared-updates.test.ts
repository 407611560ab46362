/**
 * Consecutive PATCHes of a /Bulk request share a commit, as creates do, and each keeps the
 * outcome of its single request: a stale version (412), a missing user (404), a change the caller
 * may not make (403) or the last admin's deactivation (409) fails that operation only, unless
 * failOnErrors stops the request there; each user changed gets its audit record, a deactivated
 * one loses its sessions; two requests updating the same users at once lose no update and keep
 * the version checks. On SQLite and PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { BULK_URN } from "../../src/contract/bulk.js";
import { NO_METRICS } from "../../src/server/metrics/metrics.js";
import { STORES } from "../helpers/postgres.js";
import { type Call, type ServerFixture, useTestServer } from "../helpers/server.js";

interface Operation {
  method: string;
  path: string;
  bulkId?: string;
  version?: string;
  data?: unknown;
}

type Answered = { status: string; version?: string; response?: Record<string, unknown> }[];

interface Stored {
  id: string;
  version: string;
}

/** What a scenario's operations are made of: its users, the first admin, an id nobody has. */
interface Targets {
  users: Stored[];
  admin: string;
  missing: string;
}

const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

const patch = (id: string, bulkId: string, change: Record<string, unknown>, version?: string): Operation => ({
  method: "PATCH",
  path: `/Users/${id}`,
  bulkId,
  ...(version !== undefined && { version }),
  data: { schemas: [PATCH_OP], Operations: [{ op: "replace", value: change }] },
});

const retitle = (user: Stored, i: number) => patch(user.id, `t${i}`, { title: `Title ${i}` }, user.version);
const deactivate = (id: string, i: number) => patch(id, `d${i}`, { active: false });
const STALE = '"999"';

interface Scenario {
  name: string;
  caller?: "admin" | "support";
  operations: (t: Targets) => Operation[];
  failOnErrors?: number;
  /** the status of each operation answered, in order */
  statuses: string[];
  /** which of the scenario's four users have a new version afterwards */
  changed: number[];
}

const u = (t: Targets, i: number) => t.users[i] as Stored;

const SCENARIOS: Scenario[] = [
  {
    name: "four PATCHes, each at its version",
    operations: (t) => t.users.map(retitle),
    statuses: ["200", "200", "200", "200"],
    changed: [0, 1, 2, 3],
  },
  {
    name: "a stale version (412) between others",
    operations: (t) => [retitle(u(t, 0), 0), { ...retitle(u(t, 1), 1), version: STALE }, retitle(u(t, 2), 2)],
    statuses: ["200", "412", "200"],
    changed: [0, 2],
  },
  {
    name: "a user that does not exist (404) between others",
    operations: (t) => [retitle(u(t, 0), 0), patch(t.missing, "gone", { title: "x" }), retitle(u(t, 3), 3)],
    statuses: ["200", "404", "200"],
    changed: [0, 3],
  },
  {
    name: "a deactivation support may not make, of an admin (403), between others",
    caller: "support",
    operations: (t) => [deactivate(u(t, 0).id, 0), deactivate(t.admin, 9), deactivate(u(t, 1).id, 1)],
    statuses: ["200", "403", "200"],
    changed: [0, 1],
  },
  {
    name: "the last admin's deactivation (409) between deactivations",
    operations: (t) => [deactivate(u(t, 0).id, 0), deactivate(t.admin, 9), deactivate(u(t, 1).id, 1)],
    statuses: ["200", "409", "200"],
    changed: [0, 1],
  },
  {
    name: "failOnErrors 1: the request stops at the 412, nothing after it written",
    operations: (t) => [retitle(u(t, 0), 0), { ...retitle(u(t, 1), 1), version: STALE }, retitle(u(t, 2), 2)],
    failOnErrors: 1,
    statuses: ["200", "412"],
    changed: [0],
  },
  {
    name: "failOnErrors 2: a 404 and then a 412, with a success between them",
    operations: (t) => [
      retitle(u(t, 0), 0),
      patch(t.missing, "gone", { title: "x" }),
      retitle(u(t, 1), 1),
      { ...retitle(u(t, 2), 2), version: STALE },
      retitle(u(t, 3), 3),
    ],
    failOnErrors: 2,
    statuses: ["200", "404", "200", "412"],
    changed: [0, 1],
  },
];

const bulkOf = (call: Call) => async (operations: Operation[], failOnErrors?: number) => {
  const answer = await call("POST", "/Bulk", {
    schemas: [BULK_URN.request],
    ...(failOnErrors !== undefined && { failOnErrors }),
    Operations: operations,
  });
  expect(answer.statusCode, answer.body).toBe(200);
  return (answer.json() as { Operations: Answered }).Operations;
};

/** `count` new users of the prefix, as stored: their ids and versions. */
async function createUsers(server: ServerFixture, prefix: string, count: number): Promise<Stored[]> {
  const results = await bulkOf(server.call)(
    Array.from({ length: count }, (_, i) => ({
      method: "POST",
      path: "/Users",
      bulkId: `c${i}`,
      data: { userName: `${prefix}-${i}`, title: "Engineer" },
    })),
  );
  return results.map((r) => {
    expect(r.status).toBe("201");
    const location = String((r as { location?: string }).location);
    return { id: location.slice(location.lastIndexOf("/") + 1), version: String(r.version) };
  });
}

describe.each(STORES)("bulk updates sharing commits on %s", (_store, start) => {
  let commits = 0;
  const server = useTestServer(
    {
      metrics: {
        ...NO_METRICS,
        store: {
          ...NO_METRICS.store,
          transaction: (outcome) => {
            if (outcome === "commit") commits++;
          },
        },
      },
    },
    start,
  );
  const bulk = bulkOf(server.call);
  let counter = 0;
  const prefix = (what: string) => `${what}${++counter}-${crypto.randomUUID().slice(0, 6)}`;
  let support: Call | undefined;
  const supportCall = async () => {
    support ??= (await server.signIn({ userName: prefix("support"), roles: ["support"] })).call;
    return support;
  };
  const read = async (id: string) => {
    const answer = await server.call("GET", `/Users/${id}`);
    expect(answer.statusCode, answer.body).toBe(200);
    return answer.json() as { title?: string; nickName?: string; active?: boolean; meta: { version: string } };
  };

  it.each(SCENARIOS)("$name", async ({ caller, operations, failOnErrors, statuses, changed }) => {
    const users = await createUsers(server, prefix("upd"), 4);
    const targets = { users, admin: server.admin.id, missing: crypto.randomUUID() };
    const call = caller === "support" ? await supportCall() : server.call;
    const results = await bulkOf(call)(operations(targets), failOnErrors);
    expect(results.map((r) => r.status)).toEqual(statuses);
    for (const [i, user] of users.entries()) {
      const now = await read(user.id);
      expect(now.meta.version !== user.version, `user ${i} changed`).toBe(changed.includes(i));
    }
    // the answered version of a success is the one stored
    for (const result of results.filter((r) => r.status === "200")) expect(result.version).toMatch(/^"\d+"$/);
    const admin = await read(server.admin.id);
    expect(admin.active).not.toBe(false);
  });

  it("writes 150 PATCHes in a commit a hundred, not a commit each", async () => {
    const users = await createUsers(server, prefix("many"), 150);
    const before = commits;
    const results = await bulk(users.map(retitle));
    expect(results.every((r) => r.status === "200")).toBe(true);
    expect(commits - before).toBeLessThanOrEqual(4);
    expect((await read(users[149]?.id as string)).title).toBe("Title 149");
  });

  it("writes one audit record per user changed, none for an operation that failed", async () => {
    const name = prefix("audit");
    const users = await createUsers(server, name, 4);
    const results = await bulk([
      retitle(users[0] as Stored, 0),
      { ...retitle(users[1] as Stored, 1), version: STALE },
      retitle(users[2] as Stored, 2),
    ]);
    expect(results.map((r) => r.status)).toEqual(["200", "412", "200"]);
    const filter = encodeURIComponent(`action eq "user.update" and target.name sw "${name}-"`);
    const audit = await server.call("GET", `/audit?filter=${filter}&pagesize=100`);
    expect(audit.statusCode, audit.body).toBe(200);
    const names = (audit.json() as { data: { target?: { name?: string } }[] }).data.map((r) => r.target?.name);
    expect(names.sort()).toEqual([`${name}-0`, `${name}-2`]);
  });

  it("ends the sessions of the users it deactivates", async () => {
    const users = await createUsers(server, prefix("left"), 2);
    const member = await server.signIn({ userName: prefix("member"), roles: ["member"] });
    expect((await member.call("GET", "/auth/isLogged")).statusCode).toBe(200);
    const results = await bulk([
      deactivate((users[0] as Stored).id, 0),
      deactivate(member.id, 1),
      retitle(users[1] as Stored, 1),
    ]);
    expect(results.map((r) => r.status)).toEqual(["200", "200", "200"]);
    expect((await member.call("GET", "/auth/isLogged")).statusCode).toBe(401);
    expect((await read(member.id)).active).toBe(false);
  });

  it("loses no update when two requests change the same users at once", async () => {
    const users = await createUsers(server, prefix("race"), 120);
    const [titles, nickNames] = await Promise.all([
      bulk(users.map((user, i) => patch(user.id, `t${i}`, { title: `Title ${i}` }))),
      // the other in the opposite order: each holds what the other wants next, unless locked in one order
      bulk(users.map((user, i) => patch(user.id, `d${i}`, { nickName: `Nick ${i}` })).reverse()),
    ]);
    expect([...titles, ...nickNames].every((r) => r.status === "200")).toBe(true);
    for (const [i, user] of users.entries()) {
      const now = await read(user.id);
      expect([now.title, now.nickName]).toEqual([`Title ${i}`, `Nick ${i}`]);
      expect(now.meta.version).toBe(`"${Number(/\d+/.exec(user.version)?.[0]) + 2}"`);
    }
  });

  it("lets one of two requests at the same version win each user, the other failing with 412", async () => {
    const users = await createUsers(server, prefix("versions"), 120);
    const [first, second] = await Promise.all([
      bulk(users.map((user, i) => patch(user.id, `a${i}`, { title: "first" }, user.version))),
      bulk(users.map((user, i) => patch(user.id, `b${i}`, { title: "second" }, user.version))),
    ]);
    for (const [i, user] of users.entries()) {
      const statuses = [first[i]?.status, second[i]?.status];
      expect(statuses.sort()).toEqual(["200", "412"]);
      const winner = first[i]?.status === "200" ? "first" : "second";
      expect((await read(user.id)).title).toBe(winner);
    }
  });
});
