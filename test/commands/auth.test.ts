import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { errorOf, json, leaksOf, MODES, PASSWORD, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

const NEW_PASSWORD = "purple elephants dance at midnight 7";
const WRONG_PASSWORD = "definitely not the right one 99";
const WEAK_PASSWORD = "password";

function decodePart(part: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
}

describe.each(MODES)("auth (%s)", (mode) => {
  const s = useInProcessSession(mode);

  it("refuses a wrong password with exit 4 and one JSON error object on stderr", async () => {
    const result = await s.login(s.env, s.userName, WRONG_PASSWORD);
    expect(result.exitCode, show(result)).toBe(4);
    expect(result.stdout).toBe("");
    const error = errorOf(result);
    expect(error).toMatchObject({ code: "invalid_credentials", status: 401, exitCode: 4 });
    expect(error.message).toEqual(expect.any(String));
    // an unknown user gets the same answer
    const unknown = await s.login(s.env, "nobody-here", WRONG_PASSWORD);
    expect(unknown.exitCode, show(unknown)).toBe(4);
    expect(errorOf(unknown).code).toBe("invalid_credentials");
    // the stored session is untouched
    const status = await s.run(["auth", "status", "--json"]);
    expect(status.exitCode, show(status)).toBe(0);
  });

  it("needs a user name and a password when there is no terminal (exit 2)", async () => {
    const noUser = await s.run(["auth", "login", "--password-stdin"], { input: `${PASSWORD}\n` });
    expect(noUser.exitCode, show(noUser)).toBe(2);
    expect(noUser.stderr).toContain("--user");
    const noPassword = await s.run(["auth", "login", "--user", s.userName]);
    expect(noPassword.exitCode, show(noPassword)).toBe(2);
    expect(errorOf(noPassword).hint).toMatch(/--password-stdin/);
    const emptyStdin = await s.run(["auth", "login", "--user", s.userName, "--password-stdin"], { input: "" });
    expect(emptyStdin.exitCode, show(emptyStdin)).toBe(2);
    // a password is never a flag value
    const asFlag = await s.run(["auth", "login", "--user", s.userName, "--password", PASSWORD]);
    expect(asFlag.exitCode, show(asFlag)).toBe(2);
  });

  it("takes the password from BIZCTL_PASSWORD", async () => {
    const env = await s.newConfig("c-env-password");
    const result = await s.run(["auth", "login", "--user", s.userName], {
      env: { ...env, BIZCTL_PASSWORD: s.password },
    });
    expect(result.exitCode, show(result)).toBe(0);
    expect(json(result)).toMatchObject({ user: s.userName, firstLogin: false });
  });

  it("auth status --json tells the credential source, config file and mode, user, roles and expiry", async () => {
    const result = await s.run(["auth", "status", "--json"]);
    expect(result.exitCode, show(result)).toBe(0);
    const status = json(result);
    expect(status).toMatchObject({
      profile: mode === "remote" ? "r" : "default",
      credentialSource: "profile",
      configFile: join(s.sandbox.configDir, "config.json"),
      configFileMode: "0600",
      user: s.userName,
      userId: s.userId,
      roles: ["admin"],
    });
    expect(status.server).toContain(mode === "remote" ? s.server!.url : "embedded");
    const expiresAt = Date.parse(status.expiresAt);
    expect(expiresAt).toBeGreaterThan(Date.now());
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 8 * 3600_000 + 60_000);
  });

  it("auth token prints the stored JWT", async () => {
    const result = await s.run(["auth", "token"]);
    expect(result.exitCode, show(result)).toBe(0);
    const token = result.stdout.trim();
    expect(result.stdout).toBe(`${token}\n`);
    const parts = token.split(".");
    expect(parts).toHaveLength(3);
    expect(decodePart(parts[0]!)).toMatchObject({ alg: "ES256", typ: "at+jwt" });
    expect(decodePart(parts[1]!)).toMatchObject({ sub: s.userId, roles: ["admin"] });
    const config = JSON.parse(readFileSync(join(s.sandbox.configDir, "config.json"), "utf8"));
    expect(config.profiles[mode === "remote" ? "r" : "default"].auth.token).toBe(token);
  });

  it("BIZCTL_TOKEN overrides the stored token", async () => {
    const token = (await s.run(["auth", "token"])).stdout.trim();
    const status = await s.run(["auth", "status", "--json"], { env: { BIZCTL_TOKEN: token } });
    expect(status.exitCode, show(status)).toBe(0);
    expect(json(status)).toMatchObject({ credentialSource: "BIZCTL_TOKEN", user: s.userName });

    // it is enough on its own, in a config dir that never logged in
    const env = await s.newConfig("c-token-only");
    const list = await s.run(["events", "list"], { env: { ...env, BIZCTL_TOKEN: token } });
    expect(list.exitCode, show(list)).toBe(0);
    const printed = await s.run(["auth", "token"], { env: { ...env, BIZCTL_TOKEN: token } });
    expect(printed.stdout.trim()).toBe(token);

    // and it wins over a valid stored token: a bad one fails
    const bogus = await s.run(["events", "list"], { env: { BIZCTL_TOKEN: "not-a-jwt" } });
    expect(bogus.exitCode, show(bogus)).toBe(4);
    expect(errorOf(bogus).code).toBe("token_invalid");
    const [header, payload, signature] = token.split(".");
    const tampered = `${header}.${payload}.${signature!.slice(0, -4)}${signature!.endsWith("AAAA") ? "BBBB" : "AAAA"}`;
    const forged = await s.run(["events", "list"], { env: { BIZCTL_TOKEN: tampered } });
    expect(forged.exitCode, show(forged)).toBe(4);
    expect(errorOf(forged).code).toBe("token_invalid");
  });

  it("auth logout ends the session on the server and forgets the token", async () => {
    const env = await s.newConfig("c-logout");
    expect((await s.login(env, s.userName, s.password)).exitCode).toBe(0);
    const token = (await s.run(["auth", "token"], { env })).stdout.trim();
    const logout = await s.run(["auth", "logout"], { env });
    expect(logout.exitCode, show(logout)).toBe(0);
    expect(logout.stdout).toBe("");

    const list = await s.run(["events", "list"], { env });
    expect(list.exitCode, show(list)).toBe(4);
    expect(errorOf(list)).toMatchObject({ code: "not_authenticated", exitCode: 4 });
    expect(errorOf(list).hint).toContain("bizctl auth login");
    const config = readFileSync(join(env.BIZCTL_CONFIG_DIR!, "config.json"), "utf8");
    expect(config).not.toContain(token);
    // the old token is revoked on the server, not only forgotten
    const reused = await s.run(["events", "list"], { env: { ...env, BIZCTL_TOKEN: token } });
    expect(reused.exitCode, show(reused)).toBe(4);
    expect(errorOf(reused).code).toBe("token_revoked");
    // the main session is another session and still works
    expect((await s.run(["events", "list"])).exitCode).toBe(0);
  });

  it("a stored token past its expiry asks to log in again (exit 4)", async () => {
    const env = await s.newConfig("c-expired");
    expect((await s.login(env, s.userName, s.password)).exitCode).toBe(0);
    const file = join(env.BIZCTL_CONFIG_DIR!, "config.json");
    const config = JSON.parse(readFileSync(file, "utf8"));
    const profile = config.profiles[mode === "remote" ? "r" : "default"];
    profile.auth.expiresAt = "2020-01-01T00:00:00Z";
    writeFileSync(file, JSON.stringify(config));
    const result = await s.run(["events", "list"], { env });
    expect(result.exitCode, show(result)).toBe(4);
    const error = errorOf(result);
    expect(error.message).toMatch(/expired/);
    expect(`${error.message} ${error.hint}`).toMatch(/log in again|auth login/);
    // profile list marks it, as a column on a terminal and a field in data
    const name = mode === "remote" ? "r" : "default";
    const listed = json<{ name: string; session: string }[]>(await s.run(["profile", "list", "--json"], { env }));
    expect(listed.find((p) => p.name === name)?.session).toBe("expired");
    const table = await s.run(["profile", "list"], { env, tty: true, columns: 200 });
    expect(table.stdout, show(table)).toMatch(/session/);
    expect(table.stdout.split("\n").find((line) => line.includes(s.userName))).toMatch(/expired/);

    // logging out still forgets it
    const logout = await s.run(["auth", "logout"], { env });
    expect(logout.exitCode, show(logout)).toBe(0);
    expect(JSON.parse(readFileSync(file, "utf8")).profiles[mode === "remote" ? "r" : "default"].auth).toBeUndefined();
    const again = await s.run(["auth", "logout"], { env });
    expect(again.exitCode, show(again)).toBe(0);
    expect(again.stderr).toMatch(/Not logged in/);
  });

  it("auth first-login tells about oneself (and about an employee by id)", async () => {
    const self = await s.run(["auth", "first-login"]);
    expect(self.exitCode, show(self)).toBe(0);
    expect(json(self)).toEqual({ employeeId: s.userId, firstLogin: false });
    const byId = await s.run(["auth", "first-login", s.userId]);
    expect(byId.exitCode, show(byId)).toBe(0);
    expect(json(byId)).toEqual({ employeeId: s.userId, firstLogin: false });
    const unknown = await s.run(["auth", "first-login", "00000000-0000-4000-8000-000000000000"]);
    expect(unknown.exitCode, show(unknown)).toBe(3);
  });

  it("auth change-password: a weak password exits 7, a wrong current one 4", async () => {
    const weak = await s.run(["auth", "change-password", "--password-stdin"], {
      input: `${s.password}\n${WEAK_PASSWORD}\n`,
    });
    expect(weak.exitCode, show(weak)).toBe(7);
    expect(errorOf(weak).code).toBe("weak_password");
    const wrong = await s.run(["auth", "change-password", "--password-stdin"], {
      input: `${WRONG_PASSWORD}\n${NEW_PASSWORD}\n`,
    });
    expect(wrong.exitCode, show(wrong)).toBe(4);
    expect(errorOf(wrong).code).toBe("invalid_credentials");
    const missing = await s.run(["auth", "change-password", "--password-stdin"], { input: `${s.password}\n` });
    expect(missing.exitCode, show(missing)).toBe(2);
    // nothing changed: the password still logs in
    const env = await s.newConfig("c-still");
    expect((await s.login(env, s.userName, s.password)).exitCode).toBe(0);
  });

  it("auth change-password succeeds and revokes the user's other sessions", async () => {
    const other = await s.newConfig("c-other");
    expect((await s.login(other, s.userName, s.password)).exitCode).toBe(0);
    expect((await s.run(["events", "list"], { env: other })).exitCode).toBe(0);

    const change = await s.run(["auth", "change-password", "--password-stdin"], {
      input: `${s.password}\n${NEW_PASSWORD}\n`,
    });
    expect(change.exitCode, show(change)).toBe(0);
    expect(change.stdout).toBe("");
    const oldPassword = s.password;
    s.password = NEW_PASSWORD;

    const revoked = await s.run(["events", "list"], { env: other });
    expect(revoked.exitCode, show(revoked)).toBe(4);
    expect(errorOf(revoked)).toMatchObject({ code: "token_revoked", exitCode: 4 });
    // the session that changed it goes on
    expect((await s.run(["events", "list"])).exitCode).toBe(0);
    // the old password no longer logs in, the new one does
    expect((await s.login(other, s.userName, oldPassword)).exitCode).toBe(4);
    const relogin = await s.login(other, s.userName, NEW_PASSWORD);
    expect(relogin.exitCode, show(relogin)).toBe(0);
    expect((await s.run(["events", "list"], { env: other })).exitCode).toBe(0);
  });

  it("keeps the config file at mode 0600, without any password in it", () => {
    for (const dir of [s.sandbox.configDir, join(s.sandbox.root, "c-other"), join(s.sandbox.root, "c-env-password")]) {
      const file = join(dir, "config.json");
      expect((statSync(file).mode & 0o777).toString(8)).toBe("600");
      const text = readFileSync(file, "utf8");
      for (const secret of [PASSWORD, NEW_PASSWORD, WRONG_PASSWORD]) expect(text).not.toContain(secret);
    }
  });

  it("never prints a password, on stdout, stderr or in the server's log", () => {
    for (const secret of [PASSWORD, NEW_PASSWORD, WRONG_PASSWORD]) expect(leaksOf(secret)).toEqual([]);
  });
});
