import { describe, expect, it } from "vitest";
import { errorOf, json, MODES, show } from "../helpers/cli.js";
import { expectScenario, useInProcessSession } from "../helpers/in-process.js";

/**
 * Issue 41 (user names, through the commands, in both modes): a name is one name in any Unicode
 * form and any case, at `users create`, `users get` and `auth login`; a name holding a control or
 * invisible format character is refused before anything is written.
 */

const TEMPORARY = "ochre lantern summit 4471 fjord";
const PASSWORD = "velvet quarry tangent 6628 meadow";
const PRECOMPOSED = "zo\u00eb";
const DECOMPOSED = "zoe\u0308";

describe.each(MODES)("user names in Unicode through the CLI (%s)", (mode) => {
  const s = useInProcessSession(mode);

  const create = (userName: string) =>
    s.run(["users", "create", "--user-name", userName, "--password-stdin"], { input: `${TEMPORARY}\n` });

  it("takes a decomposed name in NFC; its other forms and cases are the same user, at get and at login", async () => {
    const created = await create(`${DECOMPOSED}.Adams`);
    expect(created.exitCode, show(created)).toBe(0);
    expect(json<{ userName: string }>(created).userName).toBe(`${PRECOMPOSED}.Adams`);

    const env = await s.newConfig("zoe");
    const first = await s.login(env, `${PRECOMPOSED.toUpperCase()}.ADAMS`, TEMPORARY, PASSWORD);
    expect(first.exitCode, show(first)).toBe(0);
    const again = await s.login(await s.newConfig("zoe-2"), `${DECOMPOSED}.adams`, PASSWORD);
    expect(again.exitCode, show(again)).toBe(0);

    for (const form of [`${DECOMPOSED}.adams`, `${PRECOMPOSED.toUpperCase()}.Adams`]) {
      const got = await s.run(["users", "get", form, "--json"]);
      expect(got.exitCode, show(got)).toBe(0);
      expect(json<{ userName: string }>(got).userName).toBe(`${PRECOMPOSED}.Adams`);
    }
  });

  it.each([
    ["the decomposed form of a precomposed name", `${PRECOMPOSED}.taken`, `${DECOMPOSED}.taken`],
    ["the upper case of a lower-case name", "admin2", "ADMIN2"],
  ])("refuses %s as taken (exit 6), writing nothing", async (_what, taken, other) => {
    expect((await create(taken)).exitCode).toBe(0);
    const clash = await create(other);
    expect(clash.exitCode, show(clash)).toBe(6);
    expect(errorOf(clash).code).toBe("conflict");
    const listed = await s.run(["users", "list", "--filter", `userName eq "${taken}"`, "--json"]);
    expect(json<unknown[]>(listed)).toHaveLength(1);
  });

  it.each([
    ["a zero-width space", "ad\u200bmin3"],
    ["a bell character", "bell\u0007name"],
    ["a right-to-left override", "evil\u202egnp"],
  ])("refuses a name holding %s, and creates nobody", async (_what, userName) => {
    const result = await expectScenario(s, {
      name: userName,
      args: ["users", "create", "--user-name", userName, "--password-stdin"],
      stdin: `${TEMPORARY}\n`,
      wantExit: 7,
    });
    expect(errorOf(result).message).toMatch(/user ?name|userName/i);
    const listed = await s.run(["users", "list", "--filter", `userName sw "${userName.slice(0, 2)}"`, "--json"]);
    expect(json<{ userName: string }[]>(listed).map((u) => u.userName)).not.toContain(userName);
  });
});
