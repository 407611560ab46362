import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, json, MODES, show } from "../helpers/cli.js";
import { expectScenario, type Scenario, signedInSupport, useInProcessSession } from "../helpers/in-process.js";
import { outboxReader, recipientsOf, resetLinkOf, type SmtpSink, startSmtpSink } from "../helpers/mail.js";
import { inTerminal } from "../helpers/pty.js";

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

const CAROL = 'userName eq "carol"';
const START = "startsAt=2027-01-10T09:00:00Z";

describe.each(MODES)("messages a help desk can act on (%s)", (mode) => {
  const s = useInProcessSession(mode);
  const DESK_PASSWORD = "velvet harbour quartz 6620 meadow";
  let desk: Record<string, string>;

  beforeAll(async () => {
    for (const [userName, role] of [
      ["desk", "support"],
      ["carol", "member"],
    ]) {
      const created = await s.run(["users", "create", "--user-name", userName!, "--role", role!, "--password-stdin"], {
        input: `${TEMPORARY}\n`,
      });
      expect(created.exitCode, show(created)).toBe(0);
    }
    desk = await s.newConfig("desk");
    const login = await s.login(desk, "desk", TEMPORARY, DESK_PASSWORD);
    expect(login.exitCode, show(login)).toBe(0);
    const event = await s.run(["events", "create", "--set", "code=DESK-1", "--set", "name=Desk", "--set", START]);
    expect(event.exitCode, show(event)).toBe(0);
  }, 120_000);

  const MESSAGES: {
    name: string;
    args: string[];
    input?: string;
    /** run as the admin rather than as support */
    admin?: boolean;
    exit: number;
    want: RegExp;
    not?: RegExp;
  }[] = [
    {
      name: "support changing roles is told who may, and whom to ask",
      args: ["users", "set-roles", "carol", "admin"],
      exit: 5,
      want: /"message":"Only an admin may change the roles of users, and your account is support: ask an admin to do it\."/,
    },
    {
      name: "support writing an event is told which roles may",
      args: ["events", "create", "--set", "code=DESK", "--set", "name=Desk", "--set", "startsAt=2027-01-10T09:00:00Z"],
      exit: 5,
      want: /"message":"Only an account with the role admin or member may do this, and yours is support: ask an admin/,
      not: /needs one of the roles/,
    },
    {
      name: "unlocking a user who was never locked says nothing needed undoing",
      args: ["users", "unlock", "carol"],
      exit: 0,
      want: /^carol was not locked and had no failed logins: nothing to undo\.\n$/,
      not: /back to 0/,
    },
    {
      name: "a lower-case type in a list is told what a type name is, and the likely one",
      args: ["resources", "list", "--type", "user"],
      exit: 7,
      want: /'user' is not a resource type: a type name starts with a capital letter.*did you mean 'User'\?/,
      not: /\^\[A-Z\]/,
    },
    {
      name: "a lower-case type in a create, before anything is sent",
      args: ["resources", "create", "--type", "room", "--set", "floor=3"],
      exit: 2,
      want: /'room' is not a resource type: .*did you mean 'Room'\?/,
      not: /\^\[A-Z\]|pattern/,
    },
    {
      name: "a wrong current password is not a wrong user name",
      args: ["auth", "change-password", "--password-stdin"],
      input: `not my password at all 1234\n${DESK_PASSWORD} but new\n`,
      exit: 4,
      want: /"hint":"type your current password again; forgotten, 'bizctl auth renew-password --user NAME' mails a reset link"/,
      not: /user name and password/,
    },
    // a reset link needs an e-mail: what to do instead is what the caller may do
    {
      name: "support may not send an admin a reset link, with or without an e-mail",
      args: ["users", "reset-password", "admin"],
      exit: 5,
      want: /Only an admin may send a reset link to admin, who holds admin or support, and your account is support/,
      not: /bizctl users set-password admin/,
    },
    {
      name: "support resetting a member without an e-mail may give it a temporary password",
      args: ["users", "reset-password", "carol"],
      exit: 7,
      want: /"hint":"ask an admin to add one \('bizctl users update carol --set emails=\.\.\.'\), or give a temporary password \('bizctl users set-password carol'\)"/,
    },
    {
      name: "an admin is not told to ask an admin",
      args: ["users", "reset-password", "carol"],
      admin: true,
      exit: 7,
      want: /"hint":"add one \('bizctl users update carol --set emails=\.\.\.'\), or give a temporary password \('bizctl users set-password carol'\)"/,
      not: /ask an admin/,
    },
  ];
  it.each(MESSAGES)("$name", async (c) => {
    const result = await s.run(c.args, {
      ...(!c.admin && { env: desk }),
      ...(c.input !== undefined && { input: c.input }),
    });
    expect(result.exitCode, show(result)).toBe(c.exit);
    expect(result.stderr).toMatch(c.want);
    if (c.not) expect(result.stderr).not.toMatch(c.not);
  });
  // what a prompt would have asked: none of it may appear before the refusal
  const ASKED_FIRST: { name: string; args: string[]; question: RegExp }[] = [
    { name: "users delete", args: ["users", "delete", "carol"], question: /Delete carol|Refusing without a terminal/ },
    {
      name: "events create without a name",
      args: ["events", "create", "--set", "code=ASK"],
      question: /Name|needs 'name'/,
    },
    {
      name: "users set-password of an admin",
      args: ["users", "set-password", "admin"],
      question: /Temporary password/,
    },
    // and those that act on several records: asked, then every one refused
    { name: "users delete --filter", args: ["users", "delete", "--filter", CAROL], question: /Delete 1 user|would/ },
    {
      name: "users disable --filter of an admin",
      args: ["users", "disable", "--filter", 'userName eq "admin"'],
      question: /Disable 1 user|would/,
    },
    {
      name: "users delete --filter --dry-run",
      args: ["users", "delete", "--filter", CAROL, "--dry-run"],
      question: /would/,
    },
    { name: "events delete", args: ["events", "delete", "DESK-1"], question: /Delete event/ },
    {
      name: "events delete --filter",
      args: ["events", "delete", "--filter", 'code eq "DESK-1"'],
      question: /Delete 1/,
    },
  ];
  it("users disable --filter of ordinary users: support may, and is shown the selection", async () => {
    const result = await s.run(["users", "disable", "--filter", CAROL, "--dry-run"], { env: desk, tty: true });
    expect(result.exitCode, show(result)).toBe(0);
    expect(result.stderr).toMatch(/would disable 1 user\(s\): carol/);
  });
  it.each(ASKED_FIRST)("$name on a terminal: support is refused before any question (exit 5)", async (c) => {
    const result = await s.run(c.args, { env: desk, tty: true, input: "" });
    expect(result.exitCode, show(result)).toBe(5);
    expect(result.stderr).toMatch(/Only an admin.* and your account is support: ask an admin to do it\./);
    expect(result.stderr).not.toMatch(c.question);
  });

  it("users delete without a terminal: support is refused, not asked for --yes (exit 5)", async () => {
    const result = await s.run(["users", "delete", "carol"], { env: desk });
    expect(result.exitCode, show(result)).toBe(5);
    expect(errorOf(result).message).toBe(
      "Only an admin may delete users, and your account is support: ask an admin to do it.",
    );
  });

  it("the password rules come before the password is typed, on a terminal", async () => {
    const set = await inTerminal(
      s.env,
      ["users", "set-password", "carol"],
      [
        { expect: "at least 15 characters" },
        { expect: "Temporary password", send: TEMPORARY },
        { expect: "Repeat it", send: TEMPORARY },
        { expect: "must change it at the next login" },
      ],
    );
    expect(set.error, set.output).toBeUndefined();
    expect(set.exitCode, set.output).toBe(0);
    expect(set.output.indexOf("at least 15 characters")).toBeLessThan(set.output.indexOf("Temporary password"));
  });

  it("the only admin disabling itself is refused at once, as before: nothing to confirm (exit 6)", async () => {
    const refused = await s.run(["users", "disable", s.userName]);
    expect(refused.exitCode, show(refused)).toBe(6);
    expect(errorOf(refused).code).toBe("last_admin");
  });

  it("an admin disabling itself is asked first, once another admin exists; another user is not", async () => {
    const second = await s.run(["users", "create", "--user-name", "root2", "--role", "admin", "--password-stdin"], {
      input: `${TEMPORARY}\n`,
    });
    expect(second.exitCode, show(second)).toBe(0);
    const piped = await s.run(["users", "disable", s.userName]);
    expect(piped.exitCode, show(piped)).toBe(2);
    expect(errorOf(piped).message).toMatch(/^Disable your own account\? .*Refusing without a terminal\.$/);
    const still = await s.run(["users", "get", s.userName, "--json"]);
    expect(json(still)).toMatchObject({ active: true });
    const other = await s.run(["users", "disable", "carol"]);
    expect(other.exitCode, show(other)).toBe(0);
    expect((await s.run(["users", "enable", "carol"])).exitCode).toBe(0);
  });

  it("support disabling itself is refused before any question (exit 5)", async () => {
    const result = await s.run(["users", "disable", "desk"], { env: desk, tty: true, input: "" });
    expect(result.exitCode, show(result)).toBe(5);
    expect(result.stderr).not.toMatch(/Disable your own account/);
  });
});

describe("users reset-password and users invite (remote, a real SMTP server)", () => {
  let smtp: SmtpSink;
  // the sink comes up as the session's server starts, which is told its address
  const s = useInProcessSession("remote", {
    serverArgs: async () => {
      smtp = await startSmtpSink();
      return ["--smtp-url", smtp.url];
    },
  });
  afterAll(async () => smtp?.close());

  beforeAll(async () => {
    const users: string[][] = [
      ["pat", "--email", "pat@example.com", "--password-stdin"],
      ["nomail", "--password-stdin"],
      ["gone", "--email", "gone@example.com", "--password-stdin"],
      ["newbie", "--email", "newbie@example.com", "--no-password"],
    ];
    for (const [userName, ...more] of users) {
      const created = await s.run(["users", "create", "--user-name", userName!, ...more], { input: `${TEMPORARY}\n` });
      expect(created.exitCode, show(created)).toBe(0);
    }
    const disabled = await s.run(["users", "disable", "gone"]);
    expect(disabled.exitCode, show(disabled)).toBe(0);
  }, 120_000);

  // spec 1.1: a reset link support triggers may not open an account that holds admin or support
  let desk: Record<string, string> | undefined;
  const signedInDesk = () => signedInSupport(s, "desk");
  it.each([
    { target: "boss", role: "admin" },
    { target: "helper", role: "support" },
  ])("refuses support a reset link to an account that holds $role, and sends none", async ({ target, role }) => {
    desk ??= await signedInDesk();
    const created = await s.run(
      ["users", "create", "--user-name", target, "--email", `${target}@example.com`, "--role", role, "--no-password"],
      {},
    );
    expect(created.exitCode, show(created)).toBe(0);
    const before = smtp.messages.length;
    const refused = await s.run(["users", "reset-password", target], { env: desk });
    expect(refused.exitCode, show(refused)).toBe(5);
    expect(errorOf(refused).message).toMatch(`Only an admin may send a reset link to ${target}`);
    expect(smtp.messages.length).toBe(before);
    const sent = await s.run(["users", "reset-password", target]);
    expect(sent.exitCode, show(sent)).toBe(0);
    await smtp.waitFor((m) => m.rcptTo.includes(`${target}@example.com`));
  });

  it("mails the user's own reset link, named by e-mail, and says where it went", async () => {
    const sent = await s.run(["users", "reset-password", "pat@example.com"]);
    expect(sent.exitCode, show(sent)).toBe(0);
    expect(sent.stderr).toMatch(/^Reset link for pat queued to pat@example\.com; it works once/);
    const mail = await smtp.waitFor((m) => m.rcptTo.includes("pat@example.com"));
    expect(recipientsOf(mail)).toEqual(["pat@example.com"]);
    expect(resetLinkOf(mail).token).not.toBe("");
  });

  const REFUSED: { name: string; user: string; exit: number; code: string; message: RegExp; hint: RegExp }[] = [
    {
      name: "a user without an e-mail",
      user: "nomail",
      exit: 7,
      code: "no_email",
      message: /nomail has no e-mail address/,
      hint: /set-password nomail/,
    },
    {
      name: "a disabled user",
      user: "gone",
      exit: 6,
      code: "user_disabled",
      message: /gone is disabled/,
      hint: /users enable gone/,
    },
    { name: "an unknown user", user: "nobody", exit: 3, code: "not_found", message: /No user 'nobody'/, hint: /^$/ },
  ];
  it.each(REFUSED)("refuses $name before anything is sent, and says what to do", async (c) => {
    const before = smtp.messages.length;
    const refused = await s.run(["users", "reset-password", c.user]);
    expect(refused.exitCode, show(refused)).toBe(c.exit);
    const error = errorOf(refused);
    expect(error).toMatchObject({ code: c.code });
    expect(error.message).toMatch(c.message);
    expect(error.hint ?? "").toMatch(c.hint);
    expect(smtp.messages.length).toBe(before);
  });

  it("users invite says an earlier link stopped working only when there was one", async () => {
    const first = await s.run(["users", "invite", "newbie"]);
    expect(first.exitCode, show(first)).toBe(0);
    expect(first.stderr).toMatch(/^Invitation for newbie queued to newbie@example\.com/);
    expect(first.stderr).not.toMatch(/earlier|older/);
    const again = await s.run(["users", "invite", "newbie"]);
    expect(again.exitCode, show(again)).toBe(0);
    expect(again.stderr).toMatch(/The link of the earlier invitation no longer works\./);
  });
});

describe("users reset-password (embedded): the link is built from BIZCTL_PUBLIC_URL", () => {
  const s = useInProcessSession("embedded");

  it("mails, through the outbox, a link to the public URL", async () => {
    const created = await s.run([
      "users",
      "create",
      "--user-name",
      "lin",
      "--email",
      "lin@example.com",
      "--no-password",
    ]);
    expect(created.exitCode, show(created)).toBe(0);
    const outbox = outboxReader(s.sandbox.dataDir);
    await outbox.take();
    const sent = await s.run(["users", "reset-password", "lin"], {
      env: { BIZCTL_PUBLIC_URL: "https://desk.example.com" },
    });
    expect(sent.exitCode, show(sent)).toBe(0);
    const [mail, ...more] = await outbox.take();
    expect(more).toEqual([]);
    expect(recipientsOf(mail!)).toEqual(["lin@example.com"]);
    expect(resetLinkOf(mail!).base).toBe("https://desk.example.com");
  });
});
