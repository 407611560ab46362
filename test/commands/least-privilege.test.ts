import { beforeAll, describe, expect, it } from "vitest";
import { type Env, errorOf, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

/**
 * Support staff through the CLI: they help ordinary users and never take over a
 * privileged account; the last admin cannot lock everyone out.
 */

const SUPPORT_PASSWORD = "amber kettle orbit 5521 willow";

describe.each(MODES)("least privilege through the CLI (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let support: Env;
  const ids: Record<string, string> = {};

  /** `users create` with a generated one-time password; returns the new user's id and password. */
  async function createUser(userName: string, role: string): Promise<{ id: string; oneTimePassword: string }> {
    const created = await s.run(["users", "create", "--user-name", userName, "--role", role, "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
    return json(created);
  }

  beforeAll(async () => {
    ids.admin = s.userId;
    const helpdesk = await createUser("helpdesk", "support");
    ids.support = helpdesk.id;
    ids.member = (await createUser("jdoe", "member")).id;
    ids.otherSupport = (await createUser("helpdesk2", "support")).id;
    support = await s.newConfig("support");
    // the first login with the one-time password, then the required change
    const first = await s.login(support, "helpdesk", helpdesk.oneTimePassword, SUPPORT_PASSWORD);
    expect(first.exitCode, show(first)).toBe(0);
  });

  const REFUSED: { name: string; args: (target: string) => string[] }[] = [
    { name: "set-password", args: (id) => ["users", "set-password", id, "--generate"] },
    { name: "disable", args: (id) => ["users", "disable", id] },
    { name: "unlock", args: (id) => ["users", "unlock", id] },
  ];
  for (const { name, args } of REFUSED)
    for (const [target, words] of [
      ["admin", "an admin"],
      ["otherSupport", "another support user"],
      ["support", "itself"],
    ] as const)
      it(`support may not ${name} ${words} (exit 5)`, async () => {
        const result = await s.run(args(ids[target]!), { env: support });
        expect(result.exitCode, show(result)).toBe(5);
        expect(errorOf(result)).toMatchObject({ code: "forbidden", status: 403 });
        expect(errorOf(result).message).toMatch(/neither the admin nor the support role/);
      });

  it("leaves the admin's password and sessions alone after those refusals", async () => {
    const status = await s.run(["auth", "status", "--json"]);
    expect(status.exitCode, show(status)).toBe(0);
    const again = await s.login(await s.newConfig("admin-again"), s.userName, s.password);
    expect(again.exitCode, show(again)).toBe(0);
  });

  it("support still helps an ordinary user: a temporary password, unlock, disable", async () => {
    const set = await s.run(["users", "set-password", ids.member!, "--generate", "--json"], { env: support });
    expect(set.exitCode, show(set)).toBe(0);
    expect(json(set).oneTimePassword).toEqual(expect.any(String));
    for (const args of [
      ["users", "unlock", ids.member!],
      ["users", "disable", ids.member!],
    ]) {
      const result = await s.run(args, { env: support });
      expect(result.exitCode, show(result)).toBe(0);
    }
  });

  it("a temporary password support set stops working once the user is made an admin (exit 4)", async () => {
    const user = await createUser("promoted", "member");
    const set = await s.run(["users", "set-password", user.id, "--generate", "--json"], { env: support });
    expect(set.exitCode, show(set)).toBe(0);
    const temporary = json(set).oneTimePassword as string;
    const promote = await s.run(["users", "set-roles", user.id, "admin", "member"]);
    expect(promote.exitCode, show(promote)).toBe(0);
    const attempt = await s.login(await s.newConfig("promoted"), "promoted", temporary);
    expect(attempt.exitCode, show(attempt)).toBe(4);
    expect(errorOf(attempt).code).toBe("invalid_credentials");
    // what the admin gives instead works
    const fresh = await s.run(["users", "set-password", user.id, "--generate", "--json"]);
    const otp = json(fresh).oneTimePassword as string;
    const again = await s.login(await s.newConfig("promoted-again"), "promoted", otp, "Raised-To-Admin-Passw0rd!");
    expect(again.exitCode, show(again)).toBe(0);
    // the admin of the test stays the only one, as the last-admin test below needs
    expect((await s.run(["users", "set-roles", user.id, "member"])).exitCode).toBe(0);
  });

  it("an invitation support sent stops working once the user is given the support role (exit 7)", async () => {
    const created = await s.run([
      "users",
      "create",
      "--user-name",
      "invitee",
      "--email",
      "invitee@example.com",
      "--no-password",
      "--json",
    ]);
    expect(created.exitCode, show(created)).toBe(0);
    const invite = await s.run(["users", "invite", "invitee"], { env: support });
    expect(invite.exitCode, show(invite)).toBe(0);
    // a server sends its mail from the queue, a moment after the answer
    const outbox = async () =>
      json<{ id: string }[]>(await s.run(["server", "outbox", "list", "--to", "invitee@example.com", "--json"]));
    await expect.poll(async () => (await outbox()).length).toBeGreaterThan(0);
    const mail = (await outbox()).at(-1)!;
    const link = await s.run(["server", "outbox", "show", mail.id, "--link"]);
    const token = new URL(link.stdout.trim()).searchParams.get("token") as string;
    const promote = await s.run(["users", "set-roles", "invitee", "support"]);
    expect(promote.exitCode, show(promote)).toBe(0);
    const used = await s.run(["auth", "reset-password", "--token", token, "--password-stdin"], {
      env: await s.newConfig("invitee"),
      input: "cobalt meadow ferry 8812 lichen\n",
    });
    expect(used.exitCode, show(used)).toBe(7);
    expect(errorOf(used).code).toBe("invalid_reset_token");
  });

  it("the only admin cannot disable or delete itself (exit 6, last_admin)", async () => {
    const disable = await s.run(["users", "disable", ids.admin!]);
    expect(disable.exitCode, show(disable)).toBe(6);
    expect(errorOf(disable)).toMatchObject({ code: "last_admin", status: 409 });
    expect(errorOf(disable).hint).toMatch(/another user an admin/);
    const remove = await s.run(["resources", "delete", ids.admin!, "--yes"]);
    expect(remove.exitCode, show(remove)).toBe(6);
    expect(errorOf(remove).code).toBe("last_admin");
    const status = await s.run(["auth", "status", "--json"]);
    expect(status.exitCode, show(status)).toBe(0);
  });
});
