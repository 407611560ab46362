import { beforeAll, describe, expect, it } from "vitest";
import { json, MODES, show } from "../helpers/cli.js";
import { expectScenario, type Scenario, signedInSupport, useInProcessSession } from "../helpers/in-process.js";

/**
 * `bizctl groups` in both modes: create a group that grants a role, add and remove members by
 * user name, its members' effective roles following, set-roles, delete after the question; and
 * support refused before it is asked anything, a bad role refused before any request.
 */

describe.each(MODES)("bizctl groups (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let desk: Record<string, string>;

  beforeAll(async () => {
    desk = await signedInSupport(s, "desk");
    for (const name of ["alice", "bob"]) {
      const user = await s.run(["users", "create", "--user-name", name, "--json"]);
      expect(user.exitCode, show(user)).toBe(0);
    }
  }, 120_000);

  it("creates, lists, changes the members and roles of, and deletes a group", async () => {
    const created = await s.run(["groups", "create", "Root Team", "--role", "admin", "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
    expect(json(created)).toMatchObject({ displayName: "Root Team", roles: ["admin"] });
    const listed = await s.run(["groups", "list", "--json"]);
    expect(json(listed)).toEqual([expect.objectContaining({ displayName: "Root Team", roles: ["admin"] })]);
    const added = await s.run(["groups", "add-member", "root team", "alice", "bob"]);
    expect(added.exitCode, show(added)).toBe(0);
    expect(added.stderr).toMatch(/Added alice, bob to Root Team\./);
    const summary = await s.run(["users", "get", "alice"], { tty: true, columns: 200 });
    expect(summary.exitCode, show(summary)).toBe(0);
    expect(summary.stdout).toMatch(/admin \(Root Team\), member \(direct\)/);
    const members = await s.run(["groups", "members", "Root Team", "--json"]);
    expect(
      json(members)
        .map((m: { userName: string }) => m.userName)
        .sort(),
    ).toEqual(["alice", "bob"]);
    const removed = await s.run(["groups", "remove-member", "Root Team", "bob"]);
    expect(removed.exitCode, show(removed)).toBe(0);
    const left = await s.run(["groups", "members", "Root Team", "--json"]);
    expect(json(left).map((m: { userName: string }) => m.userName)).toEqual(["alice"]);
    const roles = await s.run(["groups", "set-roles", "Root Team", "support", "member"]);
    expect(roles.exitCode, show(roles)).toBe(0);
    const got = await s.run(["groups", "get", "Root Team", "--json"]);
    expect(json(got)).toMatchObject({ displayName: "Root Team", roles: ["support", "member"] });
    const unasked = await s.run(["groups", "delete", "Root Team"]);
    expect(unasked.exitCode, show(unasked)).toBe(2);
    const deleted = await s.run(["groups", "delete", "Root Team", "--yes"]);
    expect(deleted.exitCode, show(deleted)).toBe(0);
    const gone = await s.run(["groups", "get", "Root Team"]);
    expect(gone.exitCode, show(gone)).toBe(3);
  });

  const REFUSED: Scenario[] = [
    {
      name: "an unknown role exits 2 before any request",
      args: ["groups", "create", "X", "--role", "root"],
      wantExit: 2,
      wantStderr: /Unknown role 'root'/,
    },
    {
      name: "a taken name (any case) exits with the conflict",
      args: ["groups", "create", "taken team"],
      wantExit: 6,
      wantStderr: /already exists/,
    },
  ];
  it.each(REFUSED)("$name", async (scenario) => {
    await s.run(["groups", "create", "Taken Team"]);
    await expectScenario(s, scenario);
  });

  it("refuses support before asking: a delete, and the members of a group that grants admin", async () => {
    const admins = await s.run(["groups", "create", "Admins Only", "--role", "admin"]);
    expect(admins.exitCode, show(admins)).toBe(0);
    const del = await s.run(["groups", "delete", "Admins Only"], { env: desk, tty: true, input: "" });
    expect(del.exitCode, show(del)).toBe(5);
    expect(del.stderr).not.toMatch(/Delete the group/);
    const add = await s.run(["groups", "add-member", "Admins Only", "desk"], { env: desk });
    expect(add.exitCode, show(add)).toBe(5);
    expect(add.stderr).toMatch(/the group Admins Only, which grants admin or support/);
    const plain = await s.run(["groups", "create", "Plain Team"]);
    expect(plain.exitCode, show(plain)).toBe(0);
    const ok = await s.run(["groups", "add-member", "Plain Team", "alice"], { env: desk });
    expect(ok.exitCode, show(ok)).toBe(0);
  });
});
