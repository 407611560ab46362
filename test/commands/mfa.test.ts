/**
 * The second factor through the CLI, piped (scripts): `auth mfa enroll` answers the key, `verify`
 * activates it from a code on stdin, `auth login --password-stdin` reads the code from the line
 * after the password, a recovery code stands in once, `disable` takes the password and a code.
 * Codes are computed here (test/helpers/totp.ts), not by the server's library. Both modes.
 */
import { describe, expect, it } from "vitest";
import { errorOf, json, MODES, PASSWORD, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";
import { codeOf } from "../helpers/totp.js";

const STEP = 30_000;

describe.each(MODES)("auth mfa (%s)", (mode) => {
  const s = useInProcessSession(mode);

  const login = (...lines: string[]) =>
    s.run(["auth", "login", "--user", s.userName, "--password-stdin"], {
      input: `${[PASSWORD, ...lines].join("\n")}\n`,
    });
  const status = async () => {
    const result = await s.run(["auth", "mfa", "status", "--json"]);
    expect(result.exitCode, show(result)).toBe(0);
    return json<{ enabled: boolean; pending: boolean; recoveryCodesLeft?: number }>(result);
  };

  it("enrolls, logs in with a code and with a recovery code, and is disabled again", async () => {
    const enrolled = await s.run(["auth", "mfa", "enroll", "--json"]);
    expect(enrolled.exitCode, show(enrolled)).toBe(0);
    const { secret, uri } = json<{ secret: string; uri: string }>(enrolled);
    expect(uri).toMatch(/^otpauth:\/\/totp\/bizctl:/);
    expect(enrolled.stderr).toContain("bizctl auth mfa verify");
    expect(await status()).toMatchObject({ enabled: false, pending: true });

    const empty = await s.run(["auth", "mfa", "verify", "--code-stdin"], { input: "" });
    expect(empty.exitCode, show(empty)).toBe(2);
    const wrong = await s.run(["auth", "mfa", "verify", "--code-stdin"], {
      input: `${codeOf(secret, Date.now() + 10 * STEP)}\n`,
    });
    expect(wrong.exitCode, show(wrong)).toBe(4);
    expect(errorOf(wrong).code).toBe("invalid_otp");

    const verified = await s.run(["auth", "mfa", "verify", "--code-stdin"], { input: `${codeOf(secret)}\n` });
    expect(verified.exitCode, show(verified)).toBe(0);
    const { recoveryCodes } = json<{ recoveryCodes: string[] }>(verified);
    expect(recoveryCodes).toHaveLength(10);
    expect(await status()).toMatchObject({ enabled: true, recoveryCodesLeft: 10 });

    // the password alone: the code was expected on the next line
    const without = await login();
    expect(without.exitCode, show(without)).toBe(2);
    expect(errorOf(without).message).toMatch(/stdin has no line 2.*code/);
    // the next step's code (one step of drift): the one verify took is spent
    const next = codeOf(secret, Date.now() + STEP);
    const withCode = await login(next);
    expect(withCode.exitCode, show(withCode)).toBe(0);
    expect(json(withCode)).toMatchObject({ user: s.userName, firstLogin: false });
    const replayed = await login(next);
    expect(replayed.exitCode, show(replayed)).toBe(4);
    expect(errorOf(replayed).code).toBe("invalid_otp");

    const recovered = await login(recoveryCodes[0]!);
    expect(recovered.exitCode, show(recovered)).toBe(0);
    expect((await login(recoveryCodes[0]!)).exitCode).toBe(4);
    expect(await status()).toMatchObject({ enabled: true, recoveryCodesLeft: 9 });

    const refused = await s.run(["auth", "mfa", "disable", "--password-stdin"], {
      input: `not the password at all 1\n${recoveryCodes[1]}\n`,
    });
    expect(refused.exitCode, show(refused)).toBe(4);
    const disabled = await s.run(["auth", "mfa", "disable", "--password-stdin"], {
      input: `${PASSWORD}\n${recoveryCodes[1]}\n`,
    });
    expect(disabled.exitCode, show(disabled)).toBe(0);
    expect(disabled.stderr).toContain("Second factor removed");
    expect(await status()).toMatchObject({ enabled: false });
    const plain = await login();
    expect(plain.exitCode, show(plain)).toBe(0);
  });

  it("needs a code it can read: no terminal and no --code-stdin is a usage error", async () => {
    const result = await s.run(["auth", "mfa", "verify"]);
    expect(result.exitCode, show(result)).toBe(2);
    expect(errorOf(result).hint).toMatch(/--code-stdin/);
  });
});
