import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { type Env, errorOf, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";
import { codeOf } from "../helpers/totp.js";

/**
 * `bizctl users diagnose USER` (spec 1.11) in both modes: users made in each state from the
 * command line (an expired invitation aged in the database, as only time makes one), the diagnosis naming it (JSON when piped, a story on a terminal), and the support
 * desk's day: find a user, diagnose, run the fix offered, diagnose again and find nothing.
 */

const SUPPORT_PASSWORD = "amber kettle orbit 5521 willow";
const CHOSEN = "saffron glacier mosaic 7781 fern";

describe.each(MODES)("users diagnose (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let support: Env;

  async function create(userName: string, ...more: string[]): Promise<{ id: string; oneTimePassword?: string }> {
    const created = await s.run(["users", "create", "--user-name", userName, "--json", ...more]);
    expect(created.exitCode, show(created)).toBe(0);
    return json(created);
  }

  /** A user who has chosen a password (its first login done): healthy unless made otherwise. */
  async function settled(userName: string): Promise<void> {
    const made = await create(userName, "--email", `${userName}@example.com`);
    const own = await s.newConfig(userName);
    const first = await s.login(own, userName, made.oneTimePassword!, CHOSEN);
    expect(first.exitCode, show(first)).toBe(0);
  }

  /** Failed logins until the name backs off (15 s at first: what needs it runs right after). */
  async function lockOut(userName: string): Promise<void> {
    const stranger = await s.newConfig(`stranger-${Math.random().toString(36).slice(2)}`);
    for (let i = 0; i < 5; i++) {
      const tried = await s.login(stranger, userName, "not the password at all");
      if (errorOf(tried).code === "account_locked") return;
    }
  }

  /** A second factor enrolled from the user's own config, and one recovery code spent at a login. */
  async function spendRecoveryCode(userName: string): Promise<void> {
    const own = await s.newConfig(`${userName}-mfa`);
    expect((await s.login(own, userName, CHOSEN)).exitCode).toBe(0);
    const enrolled = await s.run(["auth", "mfa", "enroll", "--json"], { env: own });
    expect(enrolled.exitCode, show(enrolled)).toBe(0);
    const { secret } = json<{ secret: string }>(enrolled);
    const verified = await s.run(["auth", "mfa", "verify", "--code-stdin"], { env: own, input: `${codeOf(secret)}\n` });
    expect(verified.exitCode, show(verified)).toBe(0);
    const { recoveryCodes } = json<{ recoveryCodes: string[] }>(verified);
    const recovered = await s.login(await s.newConfig(`${userName}-recovered`), userName, CHOSEN, recoveryCodes[0]);
    expect(recovered.exitCode, show(recovered)).toBe(0);
  }

  /** Logins from new config dirs until the user holds `count` open sessions more. */
  async function loginTimes(userName: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const again = await s.login(await s.newConfig(`${userName}-${i}`), userName, CHOSEN);
      expect(again.exitCode, show(again)).toBe(0);
    }
  }

  /**
   * An invitation past its expiry: no command makes one (time must pass), so the row is aged in the
   * sandbox's SQLite file, as other command tests read it there.
   */
  function ageInvitation(userId: string): void {
    const db = new Database(join(s.sandbox.dataDir, "bizctl.db"), { fileMustExist: true });
    try {
      const aged = db
        .prepare("update password_resets set expires_at = ? where user_id = ?")
        .run(new Date(Date.now() - 60_000).toISOString(), userId);
      expect(aged.changes).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  }

  beforeAll(async () => {
    const helpdesk = await create("helpdesk", "--role", "support");
    support = await s.newConfig("support");
    expect((await s.login(support, "helpdesk", helpdesk.oneTimePassword!, SUPPORT_PASSWORD)).exitCode).toBe(0);
    await settled("hana");
    await settled("lena");
    await settled("dora");
    expect((await s.run(["users", "disable", "dora"])).exitCode).toBe(0);
    await create("nils", "--email", "nils@example.com", "--no-password");
    await create("ines", "--email", "ines@example.com", "--no-password");
    expect((await s.run(["users", "invite", "ines"])).exitCode).toBe(0);
    await create("tom", "--email", "tom@example.com");
    await create("ned");
    await lockOut("lena");
    const ivo = await create("ivo", "--email", "ivo@example.com", "--no-password");
    expect((await s.run(["users", "invite", "ivo"])).exitCode).toBe(0);
    ageInvitation(ivo.id);
    // a temporary password support set, on an account a group has made support since: support may
    // not give it now (a direct role change voids it at once, so only a group leaves it to be found)
    await create("vera", "--email", "vera@example.com");
    const reset = await s.run(["users", "set-password", "vera", "--generate", "--json"], { env: support });
    expect(reset.exitCode, show(reset)).toBe(0);
    expect((await s.run(["groups", "create", "Desk", "--role", "support"])).exitCode).toBe(0);
    expect((await s.run(["groups", "add-member", "Desk", "vera"])).exitCode).toBe(0);
    await settled("otto");
    await spendRecoveryCode("otto");
    // the default cap is 10 open sessions; settling opened the first
    await settled("cara");
    await loginTimes("cara", 9);
    const bot = await s.run(["service-accounts", "create", "bot", "--role", "member"]);
    expect(bot.exitCode, show(bot)).toBe(0);
    // a support account's address set with an API token: no reset link is mailed there
    await settled("rita");
    expect((await s.run(["users", "set-roles", "rita", "support"])).exitCode).toBe(0);
    const token = await s.run(["auth", "tokens", "create", "--name", "automation", "--json"]);
    expect(token.exitCode, show(token)).toBe(0);
    const byToken = await s.run(
      ["users", "update", "rita", "--set", 'emails=[{"value":"rita@example.org","primary":true}]'],
      {
        env: { BIZCTL_TOKEN: json<{ token: string }>(token).token },
      },
    );
    expect(byToken.exitCode, show(byToken)).toBe(0);
  }, 180_000);

  it.each([
    { user: "hana", codes: [] },
    { user: "lena", codes: ["locked"] },
    { user: "dora", codes: ["disabled"] },
    { user: "nils", codes: ["no_password"] },
    { user: "ines", codes: ["invitation_pending"] },
    { user: "tom", codes: ["temporary_password"] },
    { user: "ned", codes: ["temporary_password", "no_email"] },
    { user: "ivo", codes: ["invitation_expired"] },
    { user: "vera", codes: ["temporary_password_void"] },
    { user: "otto", codes: ["second_factor_lost"] },
    { user: "cara", codes: ["session_cap"] },
    { user: "bot", codes: ["service_account"] },
    { user: "rita", codes: ["reset_address_unconfirmed"] },
  ])("names what keeps $user out: $codes", async ({ user, codes }) => {
    const piped = await s.run(["users", "diagnose", user], { env: support });
    expect(piped.exitCode, show(piped)).toBe(0);
    const found = json(piped);
    expect(found.reasons.map((reason: { code: string }) => reason.code)).toEqual(codes);
    expect(found.healthy).toBe(codes.length === 0);
    const story = await s.run(["users", "diagnose", user], { env: support, tty: true });
    expect(story.exitCode, show(story)).toBe(0);
    if (codes.length === 0) expect(story.stdout).toMatch(/^hana \(.+\) can sign in: none of the login's \d+ checks/);
    for (const [i, code] of codes.entries()) expect(story.stdout).toContain(`${i + 1}. ${code} (`);
  });

  it("offers support only the fixes support may run: an e-mail address is an admin's", async () => {
    const bySupport = json(await s.run(["users", "diagnose", "ned"], { env: support }));
    expect(bySupport.reasons[1].fix).toMatchObject({ by: "admin", text: "ask an admin to add an address" });
    expect(bySupport.reasons[1].fix.command).toBeUndefined();
    const byAdmin = json(await s.run(["users", "diagnose", "ned"]));
    expect(byAdmin.reasons[1].fix.command).toMatch(/^bizctl users update ned --set 'emails=/);
  });

  it("is refused to a member, even on its own User (exit 5); an unknown user is exit 3", async () => {
    const hana = await s.newConfig("hana-again");
    expect((await s.login(hana, "hana", CHOSEN)).exitCode).toBe(0);
    // another user is not found for a member (exit 3), as everywhere; its own is refused
    const refused = await s.run(["users", "diagnose", "hana"], { env: hana });
    expect(refused.exitCode, show(refused)).toBe(5);
    const unknown = await s.run(["users", "diagnose", "nobody-here"], { env: support });
    expect(unknown.exitCode, show(unknown)).toBe(3);
    expect(errorOf(unknown).message).toMatch(/nobody-here/);
  });

  it("a deleted user kept for a restore: deleted, with the restore, to who may list them; not found to support", async () => {
    await create("gone", "--email", "gone@example.com");
    const deleted = await s.run(["users", "delete", "gone", "--yes"]);
    expect(deleted.exitCode, show(deleted)).toBe(0);
    const piped = await s.run(["users", "diagnose", "GONE"]);
    expect(piped.exitCode, show(piped)).toBe(0);
    const found = json(piped);
    expect(found).toMatchObject({ userName: "gone", healthy: false });
    expect(found.reasons).toEqual([
      expect.objectContaining({
        code: "deleted",
        effect: "refused",
        since: expect.any(String),
        until: expect.any(String),
        fix: expect.objectContaining({ by: "caller", command: "bizctl users restore gone" }),
      }),
    ]);
    expect(Date.parse(found.reasons[0].until)).toBeGreaterThan(Date.parse(found.reasons[0].since));
    const story = await s.run(["users", "diagnose", "gone"], { tty: true });
    expect(story.exitCode, show(story)).toBe(0);
    expect(story.stdout).toContain("1. deleted (refused)");
    expect(story.stdout).toContain("fix: bizctl users restore gone");
    const bySupport = await s.run(["users", "diagnose", "gone"], { env: support });
    expect(bySupport.exitCode, show(bySupport)).toBe(3);
    expect(errorOf(bySupport)).toMatchObject({ code: "not_found" });
    expect(errorOf(bySupport).message).not.toMatch(/deleted/);
  });

  it("users get shows the manager by name on a terminal; JSON keeps the record as the API answers it", async () => {
    const hana = json(await s.run(["users", "get", "hana"], { env: support }));
    await create("kim", "--no-password", "--set", `manager.value=${hana.id}`);
    const shown = await s.run(["users", "get", "kim"], { env: { ...support, NO_COLOR: "1" }, tty: true });
    expect(shown.exitCode, show(shown)).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^manager +hana \\(${hana.id}\\)$`, "m"));
    const piped = json(await s.run(["users", "get", "kim"], { env: support }));
    expect(piped.manager).toEqual({ value: hana.id });
  });

  it("the support desk's day: find the user, diagnose, run the fix offered, diagnose again", async () => {
    await lockOut("lena");
    const found = await s.run(["users", "get", "lena@example.com"], { env: support });
    expect(found.exitCode, show(found)).toBe(0);
    const before = json(await s.run(["users", "diagnose", json(found).id], { env: support }));
    expect(before.reasons.map((r: { code: string }) => r.code)).toEqual(["locked"]);
    expect(before.reasons[0].until).toBeDefined();
    const fix = before.reasons[0].fix as { by: string; command: string };
    expect(fix).toMatchObject({ by: "caller", command: "bizctl users unlock lena" });
    const ran = await s.run(fix.command.split(" ").slice(1), { env: support });
    expect(ran.exitCode, show(ran)).toBe(0);
    const after = await s.run(["users", "diagnose", "lena"], { env: support, tty: true });
    expect(after.stdout).toMatch(/^lena \(.+\) can sign in/);
    const lena = await s.newConfig("lena-again");
    expect((await s.login(lena, "lena", CHOSEN)).exitCode).toBe(0);
  });
});

// a second factor the server requires and the user has not enrolled: `--require-mfa` is a flag of
// `server start`, so this state exists in remote mode only
describe("users diagnose under --require-mfa support (remote)", () => {
  const s = useInProcessSession("remote", { serverArgs: ["--require-mfa", "support"] });

  it("names the second factor a support account has not enrolled, and the user's own fix", async () => {
    const created = await s.run([
      "users",
      "create",
      "--user-name",
      "sam",
      "--role",
      "support",
      "--email",
      "sam@example.com",
      "--json",
    ]);
    expect(created.exitCode, show(created)).toBe(0);
    const own = await s.newConfig("sam");
    const first = await s.login(own, "sam", json(created).oneTimePassword, CHOSEN);
    expect(first.exitCode, show(first)).toBe(0);
    const found = json(await s.run(["users", "diagnose", "sam"]));
    expect(found.reasons.map((reason: { code: string }) => reason.code)).toEqual(["mfa_enrollment_required"]);
    expect(found.reasons[0].fix).toMatchObject({ by: "user", command: "bizctl auth mfa enroll" });
    const story = await s.run(["users", "diagnose", "sam"], { tty: true });
    expect(story.stdout).toContain("1. mfa_enrollment_required (restricted)");
  });
});
