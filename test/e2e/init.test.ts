import { afterAll, describe, expect, it } from "vitest";
import {
  ADMIN,
  bizctl,
  type Env,
  errorOf,
  json,
  leaksOf,
  login,
  MODES,
  makeSandbox,
  PASSWORD,
  type RunningServer,
  type Sandbox,
  show,
  startServer,
} from "../helpers/cli.js";

interface Fresh {
  sandbox: Sandbox;
  env: Env;
  server?: RunningServer;
  oneTimePassword: string;
}

describe.each(MODES)("server init and the first login (%s)", (mode) => {
  const cleanups: (() => Promise<unknown>)[] = [];
  const oneTimePasswords: string[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  /** `server init` without --password-stdin on a fresh sandbox; in remote mode a server and a profile. */
  async function fresh(): Promise<Fresh> {
    const sandbox = await makeSandbox();
    cleanups.push(() => sandbox.remove());
    const init = await bizctl(["server", "init", "--admin-user", ADMIN], { env: sandbox.env });
    expect(init.exitCode, show(init)).toBe(0);
    const printed = json(init);
    expect(printed).toMatchObject({ userName: ADMIN, dataDir: sandbox.dataDir });
    expect(printed.oneTimePassword).toEqual(expect.any(String));
    oneTimePasswords.push(printed.oneTimePassword);
    let server: RunningServer | undefined;
    if (mode === "remote") {
      server = await startServer(sandbox.dataDir, { env: sandbox.env });
      cleanups.push(() => server!.stop());
      const added = await bizctl(["profile", "add", "r", "--server", server.url, "--use"], { env: sandbox.env });
      expect(added.exitCode, show(added)).toBe(0);
    }
    return { sandbox, env: sandbox.env, server, oneTimePassword: printed.oneTimePassword };
  }

  it("prints a one-time password once (JSON when piped) and refuses a second init with exit 6", async () => {
    const sandbox = await makeSandbox();
    cleanups.push(() => sandbox.remove());
    const init = await bizctl(["server", "init", "--admin-user", ADMIN], { env: sandbox.env });
    expect(init.exitCode, show(init)).toBe(0);
    const printed = json(init);
    expect(Object.keys(printed).sort()).toEqual(["dataDir", "id", "oneTimePassword", "userName"]);
    expect(printed.oneTimePassword.length).toBeGreaterThanOrEqual(15);
    expect(init.stderr).toMatch(/one-time password/i);
    // the password is on stdout only, never among the messages
    expect(init.stderr).not.toContain(printed.oneTimePassword);
    oneTimePasswords.push(printed.oneTimePassword);

    const again = await bizctl(["server", "init", "--admin-user", "someone"], { env: sandbox.env });
    expect(again.exitCode, show(again)).toBe(6);
    expect(again.stdout).toBe("");
    expect(errorOf(again)).toMatchObject({ code: "conflict", exitCode: 6 });
    // and --password-stdin does not get around it
    const withPassword = await bizctl(["server", "init", "--password-stdin"], {
      env: sandbox.env,
      input: `${PASSWORD}\n`,
    });
    expect(withPassword.exitCode, show(withPassword)).toBe(6);
  });

  it("logs in with the one-time password and a new one on the second stdin line, which clears firstLogin", async () => {
    const { env, oneTimePassword } = await fresh();
    const first = await login(env, ADMIN, oneTimePassword, PASSWORD);
    expect(first.exitCode, show(first)).toBe(0);
    expect(json(first)).toMatchObject({ user: ADMIN, roles: ["admin"], firstLogin: false });

    const list = await bizctl(["events", "list"], { env });
    expect(list.exitCode, show(list)).toBe(0);
    expect(json(list)).toEqual([]);
    const firstLogin = await bizctl(["auth", "first-login"], { env });
    expect(firstLogin.exitCode, show(firstLogin)).toBe(0);
    expect(json(firstLogin)).toMatchObject({ firstLogin: false });

    // the one-time password is spent; the new one works
    const stale = await login(env, ADMIN, oneTimePassword);
    expect(stale.exitCode, show(stale)).toBe(4);
    expect(errorOf(stale).code).toBe("invalid_credentials");
    const again = await login(env, ADMIN, PASSWORD);
    expect(again.exitCode, show(again)).toBe(0);
    expect(json(again).firstLogin).toBe(false);
  });

  it("without the second line leaves a session that may only change the password or log out", async () => {
    const { env, oneTimePassword } = await fresh();
    const first = await login(env, ADMIN, oneTimePassword);
    expect(first.exitCode, show(first)).toBe(0);
    expect(json(first)).toMatchObject({ user: ADMIN, firstLogin: true });
    expect(first.stderr).toMatch(/change-password/);

    const list = await bizctl(["events", "list"], { env });
    expect(list.exitCode, show(list)).toBe(5);
    expect(errorOf(list)).toMatchObject({ code: "password_change_required", status: 403, exitCode: 5 });
    const create = await bizctl(["events", "create", "--set", "name=x", "--set", "startsAt=2027-01-01T00:00:00Z"], {
      env,
    });
    expect(create.exitCode, show(create)).toBe(5);

    // isLogged and isFirstLogin stay open
    const firstLogin = await bizctl(["auth", "first-login"], { env });
    expect(firstLogin.exitCode, show(firstLogin)).toBe(0);
    expect(json(firstLogin)).toMatchObject({ firstLogin: true });
    const status = await bizctl(["auth", "status", "--json"], { env });
    expect(status.exitCode, show(status)).toBe(0);

    const change = await bizctl(["auth", "change-password", "--password-stdin"], {
      env,
      input: `${oneTimePassword}\n${PASSWORD}\n`,
    });
    expect(change.exitCode, show(change)).toBe(0);
    const after = await bizctl(["events", "list"], { env });
    expect(after.exitCode, show(after)).toBe(0);
    const cleared = await bizctl(["auth", "first-login"], { env });
    expect(json(cleared)).toMatchObject({ firstLogin: false });
  });

  it("never shows a password anywhere but the init output", () => {
    expect(leaksOf(PASSWORD)).toEqual([]);
    for (const otp of oneTimePasswords) {
      expect(leaksOf(otp, (what) => what.startsWith("bizctl server init") && what.endsWith("(stdout)"))).toEqual([]);
    }
  });
});
