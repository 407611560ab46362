import { describe, expect, it } from "vitest";
import { ADMIN_ROLES } from "../../src/contract/policy/index.js";
import type { Role } from "../../src/contract/route.js";
import { countActiveAdmins, saveCredential } from "../../src/server/store/users-repo.js";
import { STORES } from "../helpers/postgres.js";
import {
  type Call,
  type InjectResponse,
  insertUser,
  loggedIn,
  loginToken,
  problemOf,
  TEMP_PASSWORD,
  type TestAdmin,
  type TestServer,
  USER_PASSWORD,
  useTestServer,
} from "../helpers/server.js";

/**
 * Least privilege on accounts (spec section 1, roles): every operation on a User × the caller's
 * role × the target's roles. Support acts only on Users who hold neither admin nor support, its
 * own account included; a refused operation changes nothing.
 */

type CallerRole = "admin" | "support" | "member";
type TargetKind = "member" | "support" | "admin" | "self";
type Json = Record<string, unknown>;

/** A success status, or an error status and code. */
type Outcome = number | [status: number, code: string];
const FORBIDDEN: Outcome = [403, "forbidden"];
const NOT_FOUND: Outcome = [404, "not_found"];

interface Cell {
  call: Call;
  target: TestAdmin;
  /** the target's representation as an admin reads it */
  representation: Json;
  admin: Call;
}

interface Operation {
  name: string;
  /** prepares another user as the target (a locked or disabled account) before the call */
  prepare?: (server: TestServer, target: TestAdmin, admin: Call) => Promise<void>;
  run: (cell: Cell) => Promise<InjectResponse>;
  /** by the caller's role, then the target's */
  expect: Record<CallerRole, Record<TargetKind, Outcome>>;
}

const put = (cell: Cell, changes: Json) =>
  cell.call("PUT", `/Resources/${cell.target.id}`, { ...cell.representation, ...changes });

/** Member callers may read only their own User: another user is not found, their own is forbidden. */
const MEMBER: Record<TargetKind, Outcome> = {
  member: NOT_FOUND,
  support: NOT_FOUND,
  admin: NOT_FOUND,
  self: FORBIDDEN,
};
/** Support on ordinary users only. */
const supportOnOrdinary = (success: number): Record<TargetKind, Outcome> => ({
  member: success,
  support: FORBIDDEN,
  admin: FORBIDDEN,
  self: FORBIDDEN,
});
const everyTarget = (outcome: Outcome): Record<TargetKind, Outcome> => ({
  member: outcome,
  support: outcome,
  admin: outcome,
  self: outcome,
});

/** The target logged in elsewhere, so that signing it out has a session to end. */
const targetLoggedIn = async (server: TestServer, target: TestAdmin) => {
  await loginToken(server.app, target.userName, target.password);
};

/** One open session of the target (the caller's own when the target is the caller), as an admin lists them. */
async function aSessionOf(cell: Cell): Promise<string> {
  const { sessions } = (await cell.admin("GET", `/Resources/${cell.target.id}/sessions`)).json() as {
    sessions: { id: string }[];
  };
  if (!sessions[0]) throw new Error("the target has no open session");
  return sessions[0].id;
}

const OPERATIONS: Operation[] = [
  {
    name: "set a temporary password",
    run: (cell) => put(cell, { password: TEMP_PASSWORD }),
    expect: { admin: everyTarget(200), support: supportOnOrdinary(200), member: MEMBER },
  },
  {
    name: "disable",
    run: (cell) => put(cell, { active: false }),
    expect: { admin: everyTarget(200), support: supportOnOrdinary(200), member: MEMBER },
  },
  {
    name: "enable",
    prepare: async (_server, target, admin) => {
      const current = (await admin("GET", `/Resources/${target.id}`)).json() as Json;
      const response = await admin("PUT", `/Resources/${target.id}`, { ...current, active: false });
      if (response.statusCode !== 200) throw new Error(response.body);
    },
    run: (cell) => put(cell, { active: true }),
    // a disabled account cannot log in, so "self" enables an account that is already active
    expect: {
      admin: everyTarget(200),
      support: { ...supportOnOrdinary(200), self: 200 },
      member: { ...MEMBER, self: 200 },
    },
  },
  {
    name: "unlock",
    prepare: async (server, target) => {
      const until = new Date(Date.now() + 600_000).toISOString();
      await saveCredential(
        server.app.services.store.db,
        target.id,
        { failedLogins: 7, lockedUntil: until },
        new Date(),
      );
    },
    run: (cell) => cell.call("POST", `/auth/unlock/${cell.target.id}`),
    // members may not call unlock at all (the contract's access rule)
    expect: { admin: everyTarget(204), support: supportOnOrdinary(204), member: everyTarget(FORBIDDEN) },
  },
  {
    name: "sign out every session",
    prepare: targetLoggedIn,
    run: (cell) => cell.call("DELETE", `/Resources/${cell.target.id}/sessions`),
    // members may not call it at all (the contract's access rule); an admin may end its own too
    expect: { admin: everyTarget(200), support: supportOnOrdinary(200), member: everyTarget(FORBIDDEN) },
  },
  {
    name: "sign out one session",
    prepare: targetLoggedIn,
    run: async (cell) => cell.call("DELETE", `/Resources/${cell.target.id}/sessions/${await aSessionOf(cell)}`),
    expect: { admin: everyTarget(204), support: supportOnOrdinary(204), member: everyTarget(FORBIDDEN) },
  },
  {
    name: "send an invitation",
    // an invitation needs an address and a first password still to choose
    prepare: async (_server, target, admin) => {
      const current = (await admin("GET", `/Resources/${target.id}`)).json() as Json;
      const emails = [{ value: `${target.userName}@example.com`, primary: true }];
      const response = await admin("PUT", `/Resources/${target.id}`, { ...current, emails, password: TEMP_PASSWORD });
      if (response.statusCode !== 200) throw new Error(response.body);
    },
    run: (cell) => cell.call("POST", `/Resources/${cell.target.id}/invitation`),
    // the caller's own account has a password of its own: an invitation is for a first one
    expect: {
      admin: { ...everyTarget(202), self: [409, "conflict"] },
      support: supportOnOrdinary(202),
      member: everyTarget(FORBIDDEN),
    },
  },
  {
    name: "change roles",
    run: (cell) => put(cell, { roles: [{ value: "member" }, { value: "support" }] }),
    expect: {
      admin: everyTarget(200),
      support: everyTarget(FORBIDDEN),
      member: MEMBER,
    },
  },
  {
    name: "change an attribute",
    run: (cell) => put(cell, { title: "Changed" }),
    expect: { admin: everyTarget(200), support: everyTarget(FORBIDDEN), member: MEMBER },
  },
  {
    name: "delete",
    run: (cell) => cell.call("DELETE", `/Resources/${cell.target.id}`),
    expect: {
      admin: { ...everyTarget(204), self: [409, "conflict"] },
      support: everyTarget(FORBIDDEN),
      member: MEMBER,
    },
  },
];

const CALLERS: CallerRole[] = ["admin", "support", "member"];
const TARGETS: TargetKind[] = ["member", "support", "admin", "self"];

/** The rows that make up an account: its resource, credentials, sessions and reset or invitation links. */
async function accountRows(server: TestServer, id: string): Promise<string> {
  const db = server.app.services.store.db;
  const resource = await db.selectFrom("resources").selectAll().where("id", "=", id).execute();
  const values = await db
    .selectFrom("resource_values")
    .selectAll()
    .where("resource_id", "=", id)
    .orderBy("path")
    .orderBy("elem")
    .orderBy("text_value")
    .execute();
  const credentials = await db.selectFrom("credentials").selectAll().where("user_id", "=", id).execute();
  const sessions = await db.selectFrom("sessions").selectAll().where("user_id", "=", id).orderBy("id").execute();
  const links = await db
    .selectFrom("password_resets")
    .selectAll()
    .where("user_id", "=", id)
    .orderBy("token_hash")
    .execute();
  return JSON.stringify({ resource, values, credentials, sessions, links });
}

describe("least privilege: operation × caller's role × target's roles", () => {
  // every cell logs in a fresh caller
  const server = useTestServer({ loginRateLimit: { max: 10_000, timeWindowMs: 60_000 } });
  const admin = server.call;
  let counter = 0;

  async function newAccount(role: Role): Promise<TestAdmin> {
    return insertUser(server.app, { userName: `lp.${role}.${++counter}`, password: USER_PASSWORD, roles: [role] });
  }

  for (const operation of OPERATIONS)
    for (const callerRole of CALLERS)
      for (const targetKind of TARGETS) {
        const outcome = operation.expect[callerRole][targetKind];
        const label = typeof outcome === "number" ? String(outcome) : outcome.join(" ");
        it(`${operation.name}: ${callerRole} on ${targetKind} → ${label}`, async () => {
          const me = await newAccount(callerRole);
          const target = targetKind === "self" ? me : await newAccount(targetKind);
          if (targetKind !== "self") await operation.prepare?.(server, target, admin);
          const call = await loggedIn(server.app, me.userName, me.password);
          const representation = (await admin("GET", `/Resources/${target.id}`)).json() as Json;
          const before = await accountRows(server, target.id);
          const response = await operation.run({ call, target, representation, admin });
          if (typeof outcome === "number") {
            expect(response.statusCode, response.body.slice(0, 300)).toBe(outcome);
          } else {
            problemOf(response, outcome[0], outcome[1]);
            expect(await accountRows(server, target.id), "a refused operation changes nothing").toBe(before);
          }
        });
      }

  it("says why support is refused on a privileged account", async () => {
    const support = await newAccount("support");
    const target = await newAccount("admin");
    const call = await loggedIn(server.app, support.userName, support.password);
    const current = (await admin("GET", `/Resources/${target.id}`)).json() as Json;
    const problem = problemOf(
      await call("PUT", `/Resources/${target.id}`, { ...current, password: TEMP_PASSWORD }),
      403,
      "forbidden",
    );
    expect(problem.detail).toMatch(/only users who hold neither the admin nor the support role/);
    // the admin's own password still works, and no temporary one was set
    await loginToken(server.app, target.userName, USER_PASSWORD);
    await expect(loginToken(server.app, target.userName, TEMP_PASSWORD)).rejects.toThrow(/401/);
  });
});

describe("the last active admin", () => {
  const server = useTestServer();
  const first = server.call;

  const self = () => server.admin.id;
  const read = async (call: Call, id: string) => (await call("GET", `/Resources/${id}`)).json() as Json;
  const demote = async (call: Call, id: string) =>
    call("PUT", `/Resources/${id}`, { ...(await read(call, id)), roles: [{ value: "member" }] });
  const disable = async (call: Call, id: string) =>
    call("PUT", `/Resources/${id}`, { ...(await read(call, id)), active: false });

  const REFUSALS: { name: string; run: () => Promise<InjectResponse> }[] = [
    { name: "disable itself", run: () => disable(first, self()) },
    { name: "demote itself", run: () => demote(first, self()) },
    { name: "delete itself", run: () => first("DELETE", `/Resources/${self()}`) },
  ];

  for (const { name, run } of REFUSALS)
    it(`cannot ${name}: 409 last_admin, and nothing changes`, async () => {
      const before = await accountRows(server, self());
      const problem = problemOf(await run(), 409, "last_admin");
      expect(problem.detail).toMatch(/last active admin/);
      expect(await accountRows(server, self())).toBe(before);
      expect((await first("GET", "/auth/isLogged")).statusCode).toBe(200);
    });

  it("does not count an admin who is disabled or has no password", async () => {
    const disabled = await insertUser(server.app, { userName: "lp.off", password: USER_PASSWORD, roles: ["admin"] });
    expect((await disable(first, disabled.id)).statusCode).toBe(200);
    const created = await first("POST", "/Resources", {
      resourceType: "User",
      userName: "lp.nopassword",
      roles: [{ value: "admin" }],
    });
    expect(created.statusCode).toBe(201);
    problemOf(await disable(first, self()), 409, "last_admin");
  });

  it("lets one admin go while another remains, then guards the one left, whoever asks", async () => {
    const { call: secondCall, ...second } = await server.signIn({ userName: "lp.second", roles: ["admin"] });
    expect((await demote(secondCall, self())).statusCode).toBe(200);
    problemOf(await demote(secondCall, second.id), 409, "last_admin");
    problemOf(await disable(secondCall, second.id), 409, "last_admin");
    problemOf(await secondCall("DELETE", `/Resources/${second.id}`), 409, "last_admin");
  });
});

/**
 * Two admins demoting each other at the same moment: exactly one wins, and one admin remains. The
 * loser hears last_admin, or not_found when its own demotion landed before its request was
 * authenticated (a member may not read other users).
 */
async function demoteEachOther(server: TestServer): Promise<void> {
  const admins = [
    server.admin,
    await insertUser(server.app, { userName: "race.b", password: USER_PASSWORD, roles: ["admin"] }),
  ];
  const calls = await Promise.all(admins.map((a) => loggedIn(server.app, a.userName, a.password)));
  const bodies = await Promise.all(
    admins.map(async (a) => (await calls[0]!("GET", `/Resources/${a.id}`)).json() as Json),
  );
  const responses = await Promise.all(
    [0, 1].map((i) =>
      calls[i]!("PUT", `/Resources/${admins[1 - i]!.id}`, { ...bodies[1 - i], roles: [{ value: "member" }] }),
    ),
  );
  const statuses = responses.map((r) => r.statusCode).sort();
  expect([
    [200, 404],
    [200, 409],
  ]).toContainEqual(statuses);
  expect(await countActiveAdmins(server.app.services.store.db, ADMIN_ROLES)).toBe(1);
}

describe("the last-admin guard under concurrent changes", () => {
  it.each(STORES)("on %s", async (_store, start) => {
    const server = await start();
    try {
      await demoteEachOther(server);
    } finally {
      await server.close();
    }
  });
});
