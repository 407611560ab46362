import { beforeAll, describe, expect, it } from "vitest";
import { errorOf, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

/** `auth login`: a name without an account backs off exactly as an account does. */

const WRONG = "not the password at all 0000";

describe.each(MODES)("the login back-off by name (%s)", (mode) => {
  const s = useInProcessSession(mode);
  beforeAll(async () => {
    const created = await s.run(["users", "create", "--user-name", "jdoe", "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
  });

  it("answers an account and a name nobody holds alike: exit 4, then account_locked naming the name", async () => {
    const seen: Record<string, { exit: number | undefined; code: string; message: string }[]> = {};
    for (const name of ["jdoe", "ghost"]) {
      const env = await s.newConfig(`tries-${name}`);
      seen[name] = [];
      for (let i = 0; i < 6; i++) {
        const result = await s.login(env, name, WRONG);
        const error = errorOf(result);
        seen[name].push({ exit: result.exitCode, code: error.code, message: error.message.replace(/\d+ s\b/, "N s") });
      }
    }
    expect(seen.ghost).toEqual(seen.jdoe);
    expect(seen.jdoe!.map((r) => r.exit)).toEqual([4, 4, 4, 4, 4, 4]);
    expect(seen.jdoe![5]).toMatchObject({ code: "account_locked" });
    expect(seen.jdoe![5]!.message).toMatch(/Too many failed logins for this name; try again in N s/);
  });
});
