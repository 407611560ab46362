import { describe, expect, it } from "vitest";
import { json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

/** `users deleted`, `users restore` and `users purge` in both modes, after `users delete`. */

describe.each(MODES)("deleted users from the CLI (%s)", (mode) => {
  const s = useInProcessSession(mode);

  it("users deleted lists what users delete kept; users restore brings it back; users purge frees its name", async () => {
    const created = await s.run(["users", "create", "--user-name", "kept.one", "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
    const id = json(created).id as string;
    const run = async (args: string[], exitCode = 0) => {
      const result = await s.run(args);
      expect(result.exitCode, show(result)).toBe(exitCode);
      return result;
    };
    await run(["users", "update", id, "--set", "title=Clerk", "--json"]);
    await run(["users", "delete", "kept.one", "--yes"]);
    const listed = json(await run(["users", "deleted", "--json"])) as unknown as Record<string, unknown>[];
    expect(listed).toEqual([expect.objectContaining({ id, userName: "kept.one" })]);
    const taken = await s.run(["users", "create", "--user-name", "kept.one"]);
    expect(taken.exitCode, show(taken)).not.toBe(0);
    expect(taken.stderr).toMatch(/deleted user.*bizctl users restore/);

    await run(["users", "restore", "KEPT.ONE"]);
    expect(json(await run(["users", "get", id, "--json"]))).toMatchObject({ userName: "kept.one", title: "Clerk" });
    expect(json(await run(["users", "deleted", "--json"]))).toEqual([]);

    await run(["users", "delete", id, "--yes"]);
    await run(["users", "purge", id, "--yes"]);
    expect(json(await run(["users", "deleted", "--json"]))).toEqual([]);
    await run(["users", "create", "--user-name", "kept.one", "--json"]);
    const none = await s.run(["users", "restore", "nobody.here"]);
    expect(none.exitCode, show(none)).not.toBe(0);
    expect(none.stderr).toContain("No deleted user 'nobody.here'");
  });
});
