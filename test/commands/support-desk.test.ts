import { beforeAll, describe, expect, it } from "vitest";
import { json, MODES, show } from "../helpers/cli.js";
import { expectScenario, type Scenario, useInProcessSession } from "../helpers/in-process.js";

/**
 * Issue 32 part 4: the support desk. What a help-desk person reads of users: a list with their
 * e-mails, in the order of their names; one user as a summary; where each password stands.
 */

const NO_COLOR = { NO_COLOR: "1" };
const TEMPORARY = "ochre violin summit 4478 tundra";
const lines = (text: string) => text.split("\n").filter((line) => line.trim() !== "");

describe.each(MODES)("the support desk (%s)", (mode) => {
  const s = useInProcessSession(mode);

  beforeAll(async () => {
    const users: string[][] = [
      ["zoe", "zoe@example.com", "--no-password"],
      ["Amy", "amy@example.com", "--password-stdin", "--set", "name.givenName=Amy", "--set", "name.familyName=Pond"],
      [
        "mike",
        "mike@example.com",
        "--password-stdin",
        "--set",
        "manager.value=m-1",
        "--set",
        "manager.displayName=Ann",
      ],
    ];
    for (const [userName, email, ...more] of users) {
      const created = await s.run(["users", "create", "--user-name", userName!, "--email", email!, ...more], {
        input: `${TEMPORARY}\n`,
      });
      expect(created.exitCode, show(created)).toBe(0);
    }
  }, 120_000);

  it("users list is in the order of the user names, case aside, unless --sort-by says otherwise", async () => {
    const listed = await s.run(["users", "list"]);
    expect(listed.exitCode, show(listed)).toBe(0);
    expect(json(listed).map((u: { userName: string }) => u.userName)).toEqual([s.userName, "Amy", "mike", "zoe"]);
    const byCreation = await s.run(["users", "list", "--sort-by", "meta.created", "--sort-order", "descending"]);
    expect(json(byCreation).map((u: { userName: string }) => u.userName)).toEqual(["mike", "Amy", "zoe", s.userName]);
  });

  const TERMINAL: Scenario[] = [
    {
      name: "users list: the e-mail and where the password stands, never cut",
      args: ["users", "list"],
      wantExit: 0,
      wantStdout: (stdout) => {
        const [head, ...rows] = lines(stdout);
        expect(head).toMatch(/^id +userName +emails +roles +active +passwo\S* +locked$/);
        expect(rows.map((row) => row.split(/ +/)[1])).toEqual([s.userName, "Amy", "mike", "zoe"]);
        expect(rows[1]).toMatch(/ Amy +amy@example\.com +member +true +tempor\S* +false$/);
        expect(rows[3]).toMatch(/ zoe +zoe@example\.com +member +true +none +false$/);
      },
    },
    {
      name: "users get: a summary, the name and manager as text, no JSON",
      args: ["users", "get", "amy@example.com"],
      wantExit: 0,
      wantStdout: (stdout) => {
        const [summary] = stdout.split("Recent activity:");
        expect(lines(summary!).map((line) => line.split(/ +/)[0])).toEqual([
          "userName",
          "id",
          "name",
          "emails",
          "roles",
          "active",
          "passwordState",
          "firstLogin",
          "locked",
          "failedLogins",
          "passwordChangedAt",
          "openSessions",
          "invited",
          "mfaEnabled",
          "created",
          "lastModified",
        ]);
        expect(summary).toMatch(/^name +Amy Pond$/m);
        expect(summary).toMatch(/^passwordState +temporary$/m);
        expect(summary).not.toMatch(/[{}]|schemas|meta/);
      },
    },
    {
      name: "users get: a manager by name and id; a user without a password says none",
      args: ["users", "get", "mike"],
      wantExit: 0,
      wantStdout: /^manager +Ann \(m-1\)$/m,
    },
    {
      name: "users get: none",
      args: ["users", "get", "zoe"],
      wantExit: 0,
      wantStdout: /^passwordState +none$/m,
    },
  ];
  it.each(TERMINAL)("on a terminal: $name", async (scenario) => {
    await expectScenario(s, { ...scenario, tty: true, columns: 120, env: NO_COLOR });
  });

  it("users get -o json is the record as the API answers it", async () => {
    const got = await s.run(["users", "get", "Amy", "-o", "json"], { tty: true, columns: 120 });
    expect(got.exitCode, show(got)).toBe(0);
    expect(json(got)).toMatchObject({
      userName: "Amy",
      name: { givenName: "Amy", familyName: "Pond" },
      meta: { resourceType: "User" },
      passwordState: "temporary",
    });
  });
});
