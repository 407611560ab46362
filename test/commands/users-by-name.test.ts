import { describe, expect, it } from "vitest";
import { errorOf, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";
import { NEW_PASSWORD } from "../helpers/server.js";

/** Every `users` verb takes an id, a user name or an e-mail address, as support staff know a user. */

type Reference = "id" | "userName" | "e-mail";
const REFERENCES: Reference[] = ["id", "userName", "e-mail"];

describe.each(MODES)("users by id, name or e-mail (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let counter = 0;

  /** a fresh member with an e-mail; returns how to name it */
  async function newUser(): Promise<Record<Reference, string>> {
    const userName = `jdoe${++counter}`;
    const email = `${userName}@example.com`;
    const created = await s.run(["users", "create", "--user-name", userName, "--email", email, "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
    return { id: json(created).id, userName, "e-mail": email.toUpperCase() };
  }

  const VERBS: { verb: string; args: (ref: string) => string[]; check?: (out: Record<string, unknown>) => void }[] = [
    { verb: "get", args: (ref) => ["users", "get", ref, "--json"], check: (u) => expect(u.resourceType).toBe("User") },
    {
      verb: "update",
      args: (ref) => ["users", "update", ref, "--set", "title=Clerk", "--json"],
      check: (u) => expect(u.title).toBe("Clerk"),
    },
    {
      verb: "set-roles",
      args: (ref) => ["users", "set-roles", ref, "support", "member", "--json"],
      check: (u) =>
        expect(u.roles).toEqual([
          { value: "support", primary: true },
          { value: "member", primary: false },
        ]),
    },
    {
      verb: "set-password",
      args: (ref) => ["users", "set-password", ref, "--generate", "--json"],
      check: (u) => expect(u.oneTimePassword).toEqual(expect.any(String)),
    },
    { verb: "disable", args: (ref) => ["users", "disable", ref, "--json"], check: (u) => expect(u.active).toBe(false) },
    { verb: "enable", args: (ref) => ["users", "enable", ref, "--json"], check: (u) => expect(u.active).toBe(true) },
    { verb: "unlock", args: (ref) => ["users", "unlock", ref] },
    { verb: "sessions", args: (ref) => ["users", "sessions", ref, "--json"], check: (out) => expect(out).toEqual([]) },
    { verb: "sign-out", args: (ref) => ["users", "sign-out", ref] },
    { verb: "invite", args: (ref) => ["users", "invite", ref] },
    { verb: "delete", args: (ref) => ["users", "delete", ref, "--yes"] },
  ];

  for (const { verb, args, check } of VERBS)
    for (const reference of REFERENCES)
      it(`users ${verb} by ${reference}`, async () => {
        const user = await newUser();
        const result = await s.run(args(user[reference]));
        expect(result.exitCode, show(result)).toBe(0);
        if (check) check(json(result));
        if (verb === "delete") {
          const gone = await s.run(["users", "get", user.id]);
          expect(gone.exitCode, show(gone)).toBe(3);
        }
      });

  it("an unknown name exits 3 and names it", async () => {
    const result = await s.run(["users", "unlock", "nobody-by-that-name"]);
    expect(result.exitCode, show(result)).toBe(3);
    expect(errorOf(result).message).toContain("nobody-by-that-name");
  });

  it("an e-mail that several users share is refused, listing them (exit 2)", async () => {
    for (const userName of ["twin.a", "twin.b"]) {
      const created = await s.run(["users", "create", "--user-name", userName, "--email", "twins@example.com"]);
      expect(created.exitCode, show(created)).toBe(0);
    }
    const result = await s.run(["users", "disable", "twins@example.com"]);
    expect(result.exitCode, show(result)).toBe(2);
    expect(errorOf(result).message).toMatch(/twin\.a .*twin\.b|twin\.b .*twin\.a/);
  });

  it("users set-roles refuses an unknown role before asking the server (exit 2)", async () => {
    const result = await s.run(["users", "set-roles", "admin", "superuser"]);
    expect(result.exitCode, show(result)).toBe(2);
  });

  it("users unlock says whether the account was locked", async () => {
    const user = await newUser();
    const before = await s.run(["users", "unlock", user.userName]);
    expect(before.stderr).toMatch(/was not locked/);
    const set = await s.run(["users", "set-password", user.userName, "--generate", "--json"]);
    const other = await s.newConfig(`locked-${user.userName}`);
    for (let i = 0; i < 5; i++) {
      await s.run(["auth", "login", "--user", user.userName, "--password-stdin"], {
        env: other,
        input: "not the password at all 00\n",
      });
    }
    const state = await s.run(["users", "get", user["e-mail"], "--json"]);
    expect(json(state)).toMatchObject({ locked: true, failedLogins: 5 });
    const unlocked = await s.run(["users", "unlock", user["e-mail"]]);
    expect(unlocked.exitCode, show(unlocked)).toBe(0);
    expect(unlocked.stderr).toMatch(/Unlocked jdoe\d+: it was locked until .* after 5 failed logins/);
    const login = await s.run(["auth", "login", "--user", user.userName, "--password-stdin"], {
      env: other,
      // the temporary password, then the new one a first login asks for
      input: `${json(set).oneTimePassword}\n${NEW_PASSWORD}\n`,
    });
    expect(login.exitCode, show(login)).toBe(0);
  });

  it("--fields takes dotted paths and sub-attributes of multi-valued attributes, in every format", async () => {
    const user = await newUser();
    const update = await s.run(["users", "update", user.userName, "--set", "name.givenName=Jane"]);
    expect(update.exitCode, show(update)).toBe(0);
    const args = ["users", "get", user.userName, "--fields", "userName,name.givenName,emails.value"];
    const asJson = await s.run([...args, "--json"]);
    expect(json(asJson)).toEqual({
      userName: user.userName,
      name: { givenName: "Jane" },
      emails: [{ value: user["e-mail"].toLowerCase() }],
    });
    const asCsv = await s.run([...args, "-o", "csv"]);
    expect(asCsv.stdout.trim().split("\n")).toEqual([
      "userName,name.givenName,emails.value",
      `${user.userName},Jane,${user["e-mail"].toLowerCase()}`,
    ]);
  });
});
