import { beforeAll, describe, expect, it } from "vitest";
import { show } from "../helpers/cli.js";
import { expectScenario, type Scenario, useInProcessSession } from "../helpers/in-process.js";

/**
 * Issue 47 (17): what the CLI says on a terminal is in words for people, not the API's names
 * (`renewPassword`, `userName`), and a refusal says which of its reasons it is.
 */
const noInternalName = (text: string) => {
  expect(text).not.toMatch(/\b[a-z]+[A-Z][A-Za-z]*\b/);
};

const scenarios: Scenario[] = [
  {
    name: "inviting a user who has chosen a password says what to send instead",
    args: ["users", "invite", "admin"],
    tty: true,
    wantExit: 6,
    wantStderr: (text) => {
      expect(text).toMatch(/send them a password reset link instead/);
      noInternalName(text);
    },
  },
  {
    name: "inviting a user without an address says that, not 'disabled or'",
    args: ["users", "invite", "noaddress"],
    tty: true,
    wantExit: 6,
    wantStderr: (text) => {
      expect(text).toMatch(/noaddress cannot be invited: the user has no e-mail address\./);
      noInternalName(text);
    },
  },
  {
    name: "inviting a disabled user says it is disabled",
    args: ["users", "invite", "gone"],
    tty: true,
    wantExit: 6,
    wantStderr: /gone cannot be invited: the account is disabled\./,
  },
  {
    name: "a User without a name names it in words",
    args: ["resources", "create", "--type", "User", "--set", "displayName=Nobody"],
    wantExit: 2,
    wantStderr: /A user needs a user name\./,
  },
];

describe.each(["embedded", "remote"] as const)("messages in words for people (%s)", (mode) => {
  const s = useInProcessSession(mode);

  beforeAll(async () => {
    for (const name of ["noaddress", "gone"]) {
      const created = await s.run(["users", "create", "--user-name", name, "--email", `${name}@example.com`]);
      expect(created.exitCode, show(created)).toBe(0);
    }
    const cleared = await s.run(["users", "update", "noaddress", "--set", "emails=[]"]);
    expect(cleared.exitCode, show(cleared)).toBe(0);
    const disabled = await s.run(["users", "disable", "gone", "--yes"]);
    expect(disabled.exitCode, show(disabled)).toBe(0);
  });

  it.each(scenarios)("$name", async (scenario) => {
    await expectScenario(s, scenario);
  });
});
