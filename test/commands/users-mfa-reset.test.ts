import { beforeAll, describe, expect, it } from "vitest";
import { type Env, errorOf, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";
import { codeOf } from "../helpers/totp.js";

/**
 * `users mfa-reset` through the CLI, both modes: support removes an ordinary user's second factor
 * (asked to confirm, --yes without a terminal), the user's sessions end and `mfaEnabled` turns
 * false; support is refused on staff (exit 5); a user without a factor is exit 3.
 */

const CHOSEN = "amber kettle orbit 5521 willow";

describe.each(MODES)("users mfa-reset (%s)", (mode) => {
  const s = useInProcessSession(mode);
  const envs: Record<string, Env> = {};

  /** A user with a one-time password, logged in with its own config dir, password changed. */
  async function signedIn(userName: string, role: string): Promise<Env> {
    const created = await s.run(["users", "create", "--user-name", userName, "--role", role, "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
    const { oneTimePassword } = json<{ oneTimePassword: string }>(created);
    const env = await s.newConfig(userName);
    const first = await s.login(env, userName, oneTimePassword, CHOSEN);
    expect(first.exitCode, show(first)).toBe(0);
    return env;
  }

  async function enroll(env: Env): Promise<void> {
    const enrolled = await s.run(["auth", "mfa", "enroll", "--json"], { env });
    expect(enrolled.exitCode, show(enrolled)).toBe(0);
    const { secret } = json<{ secret: string }>(enrolled);
    const verified = await s.run(["auth", "mfa", "verify", "--code-stdin"], { env, input: `${codeOf(secret)}\n` });
    expect(verified.exitCode, show(verified)).toBe(0);
  }

  const mfaEnabled = async (userName: string) => {
    const got = await s.run(["users", "get", userName, "--json"]);
    expect(got.exitCode, show(got)).toBe(0);
    return json<{ mfaEnabled: boolean }>(got).mfaEnabled;
  };

  beforeAll(async () => {
    envs.support = await signedIn("helpdesk", "support");
    envs.member = await signedIn("jdoe", "member");
    envs.staff = await signedIn("helpdesk2", "support");
    await enroll(envs.member);
    await enroll(envs.staff);
  });

  it("shows mfaEnabled in users list", async () => {
    const listed = await s.run(["users", "list", "--json"]);
    expect(listed.exitCode, show(listed)).toBe(0);
    const users = json<{ userName: string; mfaEnabled: boolean }[]>(listed);
    expect(Object.fromEntries(users.map((u) => [u.userName, u.mfaEnabled]))).toMatchObject({
      jdoe: true,
      helpdesk: false,
      helpdesk2: true,
    });
  });

  it.each([
    { who: "support", target: "helpdesk2", args: ["--yes"], exit: 5, code: "forbidden" },
    { who: "support", target: "helpdesk", args: ["--yes"], exit: 5, code: "forbidden" },
    { who: "support", target: "no-such-user", args: ["--yes"], exit: 3, code: "not_found" },
    { who: "support", target: "jdoe", args: [], exit: 2, code: "usage" },
  ])("$who on $target $args: exit $exit ($code), nothing changed", async ({ who, target, args, exit, code }) => {
    const result = await s.run(["users", "mfa-reset", target, ...args], { env: envs[who] });
    expect(result.exitCode, show(result)).toBe(exit);
    expect(errorOf(result).code).toBe(code);
    expect(await mfaEnabled("jdoe")).toBe(true);
    expect(await mfaEnabled("helpdesk2")).toBe(true);
  });

  it("support resets an ordinary user's factor with a reason: its sessions end", async () => {
    const reset = await s.run(["users", "mfa-reset", "jdoe", "--reason", "lost phone, ticket 4711", "--yes"], {
      env: envs.support,
    });
    expect(reset.exitCode, show(reset)).toBe(0);
    expect(reset.stderr).toMatch(/Removed the second factor of jdoe; 1 session ended/);
    expect(await mfaEnabled("jdoe")).toBe(false);
    const status = await s.run(["auth", "status", "--json"], { env: envs.member });
    expect(status.exitCode, show(status)).toBe(4);
    const audit = await s.run([
      "audit",
      "list",
      "--filter",
      'action eq "mfa.reset" and outcome eq "success"',
      "--json",
    ]);
    expect(audit.exitCode, show(audit)).toBe(0);
    expect(JSON.stringify(json(audit))).toContain("lost phone, ticket 4711");
    // nothing left to reset
    const again = await s.run(["users", "mfa-reset", "jdoe", "--yes"], { env: envs.support });
    expect(again.exitCode, show(again)).toBe(3);
    expect(errorOf(again).message).toMatch(/has no second factor/);
  });
});
