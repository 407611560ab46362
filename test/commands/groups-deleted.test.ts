import { beforeAll, describe, expect, it } from "vitest";
import { json, MODES, show } from "../helpers/cli.js";
import { expectScenario, type Scenario, signedInSupport, useInProcessSession } from "../helpers/in-process.js";

/**
 * `groups deleted`, `groups restore` and `groups purge` in both modes, after `groups delete`: the
 * kept group listed, its name refused to a new group with the way out, restored with its roles
 * and the members that still exist (naming the one gone), purged; support refused, exit 5.
 */

describe.each(MODES)("deleted groups from the CLI (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let desk: Record<string, string>;
  const run = async (args: string[], exitCode = 0, options: Parameters<typeof s.run>[1] = {}) => {
    const result = await s.run(args, options);
    expect(result.exitCode, show(result)).toBe(exitCode);
    return result;
  };

  beforeAll(async () => {
    desk = await signedInSupport(s, "desk");
    for (const name of ["stays", "leaves"]) await run(["users", "create", "--user-name", name, "--json"]);
    await run(["groups", "create", "Desk Gone", "--role", "support"]);
    await run(["groups", "delete", "Desk Gone", "--yes"]);
  }, 120_000);

  it("lists what groups delete kept, restores it with its roles and the members still there, and purges it", async () => {
    const id = json(await run(["groups", "create", "Kept Team", "--role", "support", "--json"])).id as string;
    await run(["groups", "add-member", "Kept Team", "stays", "leaves"]);
    await run(["groups", "delete", "Kept Team", "--yes"]);
    await run(["users", "delete", "leaves", "--yes"]);
    const listed = json(await run(["groups", "deleted", "--json"])) as unknown as Record<string, unknown>[];
    expect(listed).toContainEqual(
      expect.objectContaining({ id, displayName: "Kept Team", roles: ["support"], members: 2 }),
    );
    const table = await run(["groups", "deleted"], 0, { tty: true, columns: 200 });
    expect(table.stdout).toMatch(/Kept Team.*support/);
    const taken = await s.run(["groups", "create", "kept team"]);
    expect(taken.exitCode, show(taken)).toBe(6);
    expect(taken.stderr).toMatch(/deleted group.*bizctl groups restore/);

    const restored = await run(["groups", "restore", "KEPT TEAM", "--json"]);
    expect(json(restored)).toMatchObject({
      id,
      displayName: "Kept Team",
      roles: ["support"],
      members: 1,
      membersNotRestored: [{ userName: "leaves" }],
    });
    expect(restored.stderr).toMatch(/Not restored, deleted users: leaves/);
    const members = json(await run(["groups", "members", "Kept Team", "--json"])) as unknown as { userName: string }[];
    expect(members.map((m) => m.userName)).toEqual(["stays"]);
    const user = await run(["users", "restore", "leaves"]);
    expect(user.stderr).toMatch(/Restored leaves/);
    const back = json(await run(["groups", "members", "Kept Team", "--json"])) as unknown as { userName: string }[];
    expect(back.map((m) => m.userName).sort()).toEqual(["leaves", "stays"]);

    await run(["groups", "delete", id, "--yes"]);
    const onTerminal = await run(["groups", "restore", id], 0, { tty: true, columns: 200 });
    expect(onTerminal.stdout).toMatch(/Kept Team/);
    await run(["groups", "delete", id, "--yes"]);
    await run(["groups", "purge", id], 2);
    await run(["groups", "purge", id, "--yes"]);
    expect(JSON.stringify(json(await run(["groups", "deleted", "--json"])))).not.toContain(id);
    await run(["groups", "create", "Kept Team"]);
  });

  it("users restore names the deleted group it is not back in, and that group's restore brings it back", async () => {
    await run(["users", "create", "--user-name", "wanders", "--json"]);
    await run(["groups", "create", "Wander Team"]);
    await run(["groups", "add-member", "Wander Team", "wanders"]);
    await run(["users", "delete", "wanders", "--yes"]);
    await run(["groups", "delete", "Wander Team", "--yes"]);
    const user = await run(["users", "restore", "wanders"]);
    expect(user.stderr).toMatch(/Not back in the deleted groups Wander Team: their restore brings it back/);
    await run(["groups", "restore", "Wander Team"]);
    const members = json(await run(["groups", "members", "Wander Team", "--json"])) as unknown as {
      userName: string;
    }[];
    expect(members.map((m) => m.userName)).toEqual(["wanders"]);
  });

  const REFUSED: Scenario[] = [
    {
      name: "a group no one deleted exits 3",
      args: ["groups", "restore", "Never Was"],
      wantExit: 3,
      wantStderr: /No deleted group 'Never Was' \(bizctl groups deleted lists them\)/,
    },
    {
      name: "purging a group no one deleted exits 3",
      args: ["groups", "purge", "Never Was", "--yes"],
      wantExit: 3,
      wantStderr: /No deleted group 'Never Was'/,
    },
  ];
  it.each(REFUSED)("$name", async (scenario) => {
    await expectScenario(s, scenario);
  });

  it.each([["deleted"], ["restore", "Desk Gone"], ["purge", "Desk Gone"]])(
    "refuses support groups %s (exit 5)",
    async (...args) => {
      const refused = await s.run(["groups", ...args], { env: desk, tty: true, input: "" });
      expect(refused.exitCode, show(refused)).toBe(5);
    },
  );
});
