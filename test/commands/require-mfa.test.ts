import { describe, expect, it } from "vitest";
import { errorOf, json, PASSWORD, show } from "../helpers/cli.js";
import { runInProcess, useInProcessSession } from "../helpers/in-process.js";
import { codeOf } from "../helpers/totp.js";

/**
 * `server start --require-mfa` seen from the CLI: the flag (its values checked), the login that
 * says to enroll, exit 5 with the hint everywhere else, and the same profile working once the
 * factor is verified. The policy is a `server start` option: the remote mode only (the embedded
 * CLI has none); test/server/mfa-policy.test.ts covers the server on both stores.
 */

describe("server start --require-mfa", () => {
  it.each([["root"], ["admin,owner"]])("refuses --require-mfa %s (exit 2)", async (value) => {
    const result = await runInProcess(["server", "start", "--require-mfa", value, "--port", "0"]);
    expect(result.exitCode, show(result)).toBe(2);
    expect(errorOf(result).message).toMatch(/is not a role/);
  });
});

describe("an admin without a second factor under --require-mfa admin,support (remote)", () => {
  const s = useInProcessSession("remote", { serverArgs: ["--require-mfa", "admin,support"] });

  it("logs in, is told to enroll, gets exit 5 elsewhere, and works once enrolled", async () => {
    const login = await s.login(s.env, s.userName, PASSWORD);
    expect(login.exitCode, show(login)).toBe(0);
    expect(json(login)).toMatchObject({ user: s.userName, mfaEnrollmentRequired: true });
    expect(login.stderr).toContain("run 'bizctl auth mfa enroll'");

    for (const args of [
      ["users", "list"],
      ["events", "list"],
      ["auth", "sessions"],
    ]) {
      const refused = await s.run(args);
      expect(refused.exitCode, show(refused)).toBe(5);
      expect(errorOf(refused)).toMatchObject({ code: "mfa_enrollment_required", hint: "run 'bizctl auth mfa enroll'" });
    }
    expect((await s.run(["auth", "status"])).exitCode).toBe(0);

    const enrolled = await s.run(["auth", "mfa", "enroll", "--json"]);
    expect(enrolled.exitCode, show(enrolled)).toBe(0);
    const { secret } = json<{ secret: string }>(enrolled);
    const verified = await s.run(["auth", "mfa", "verify", "--code-stdin"], { input: `${codeOf(secret)}\n` });
    expect(verified.exitCode, show(verified)).toBe(0);
    // the same profile's token: no new login
    const listed = await s.run(["users", "list", "--json"]);
    expect(listed.exitCode, show(listed)).toBe(0);
    expect(json<{ userName: string; mfaEnabled: boolean }[]>(listed)).toEqual([
      expect.objectContaining({ userName: s.userName, mfaEnabled: true }),
    ]);
  });
});
