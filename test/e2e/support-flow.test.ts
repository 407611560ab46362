import { beforeAll, describe, expect, it } from "vitest";
import { type Env, login, MODES, show, useSession } from "../helpers/cli.js";
import { inTerminal } from "../helpers/pty.js";

/**
 * The support flow at a terminal, as a help-desk person works it (issue 14): find a locked user
 * by e-mail, see that it is locked, unlock it, set a temporary password; the user then logs in
 * and is asked for a new one. Every step runs the real binary in a pseudo-terminal.
 */

const TEMPORARY = "ochre violin summit 4478 tundra";
const SUPPORT_PASSWORD = "velvet harbour quartz 6620 meadow";
const USER_PASSWORD = "amber lantern orbit 3391 prairie";
const USER_NEW_PASSWORD = "copper kettle glacier 5520 willow";
const EMAIL = "jdoe@example.com";

describe.each(MODES)("the support flow in a terminal (%s)", (mode) => {
  const s = useSession(mode);
  let support: Env;
  let user: Env;

  /** Creates a user with a temporary password and logs it in once, choosing its own. */
  async function account(userName: string, role: string, email: string, password: string): Promise<Env> {
    const created = await s.run(
      ["users", "create", "--user-name", userName, "--email", email, "--role", role, "--password-stdin"],
      { input: `${TEMPORARY}\n` },
    );
    expect(created.exitCode, show(created)).toBe(0);
    const env = await s.newConfig(userName);
    const first = await login(env, userName, TEMPORARY, password);
    expect(first.exitCode, show(first)).toBe(0);
    return env;
  }

  beforeAll(async () => {
    support = await account("helpdesk", "support", "helpdesk@example.com", SUPPORT_PASSWORD);
    user = await account("jdoe", "member", EMAIL, USER_PASSWORD);
    // five wrong passwords lock the account
    for (let i = 0; i < 5; i++) {
      const wrong = await login(user, "jdoe", "not the password of jdoe 123");
      expect(wrong.exitCode, show(wrong)).not.toBe(0);
    }
  }, 300_000);

  it("finds the locked user by e-mail, unlocks it, sets a temporary password; the user must choose a new one", async () => {
    // 1. find the user by e-mail, and 2. see that it is locked
    const found = await inTerminal(support, ["users", "get", EMAIL]);
    expect(found.exitCode, found.output).toBe(0);
    expect(found.output).toMatch(/^userName +jdoe\r?$/m);
    expect(found.output).toMatch(/^locked +true\r?$/m);
    expect(found.output).toMatch(/^failedLogins +5\r?$/m);
    const listed = await inTerminal(support, [
      "users",
      "list",
      "--filter",
      `emails.value eq "${EMAIL}" and locked eq true`,
    ]);
    expect(listed.exitCode, listed.output).toBe(0);
    expect(listed.output).toMatch(/ jdoe +/);

    // 3. unlock it: the answer says it was locked
    const unlocked = await inTerminal(support, ["users", "unlock", EMAIL]);
    expect(unlocked.exitCode, unlocked.output).toBe(0);
    expect(unlocked.output).toMatch(/Unlocked jdoe: it was locked until .* after 5 failed logins/);

    // 4. a temporary password, typed (masked) at the prompt
    const set = await inTerminal(
      support,
      ["users", "set-password", EMAIL],
      [
        { expect: "Temporary password", send: TEMPORARY },
        { expect: "Repeat it", send: TEMPORARY },
        { expect: "must change it at the next login" },
      ],
    );
    expect(set.error, set.output).toBeUndefined();
    expect(set.exitCode, set.output).toBe(0);
    expect(set.raw).not.toContain(TEMPORARY);

    // 5. the user logs in with it and is asked for a new one
    const first = await inTerminal(
      user,
      ["auth", "login", "--user", "jdoe"],
      [
        { expect: "Password", send: TEMPORARY },
        { expect: "New password", send: USER_NEW_PASSWORD },
        { expect: "Repeat it", send: USER_NEW_PASSWORD },
        { expect: "Password changed" },
      ],
    );
    expect(first.error, first.output).toBeUndefined();
    expect(first.exitCode, first.output).toBe(0);
    expect(first.output).toContain("temporary");
    const after = await inTerminal(support, ["users", "get", EMAIL]);
    expect(after.output).toMatch(/^locked +false\r?$/m);
    expect(after.output).toMatch(/^firstLogin +false\r?$/m);
  }, 300_000);
});
