import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN,
  type Env,
  errorOf,
  json,
  leaksOf,
  login as loginWith,
  MODES,
  makeSandbox,
  PASSWORD,
  type RunningServer,
  type Sandbox,
  show,
  startServer,
} from "../helpers/cli.js";
import { runInProcess } from "../helpers/in-process.js";

/**
 * `server init` and the first login, and the commands on a data dir that was never initialised,
 * run in this process (remote: against a real `server start` process). That `server start`
 * itself refuses such a data dir: test/e2e/start-uninitialised.test.ts.
 */

/** `auth login --password-stdin`, in this process. */
const login = (env: Env, userName: string, password: string, extraLine?: string) =>
  loginWith(env, userName, password, extraLine, runInProcess);

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
    const init = await runInProcess(["server", "init", "--admin-user", ADMIN], { env: sandbox.env });
    expect(init.exitCode, show(init)).toBe(0);
    const printed = json(init);
    expect(printed).toMatchObject({ userName: ADMIN, dataDir: sandbox.dataDir });
    expect(printed.oneTimePassword).toEqual(expect.any(String));
    oneTimePasswords.push(printed.oneTimePassword);
    let server: RunningServer | undefined;
    if (mode === "remote") {
      server = await startServer(sandbox.dataDir, { env: sandbox.env });
      cleanups.push(() => server!.stop());
      const added = await runInProcess(["profile", "add", "r", "--server", server.url, "--use"], { env: sandbox.env });
      expect(added.exitCode, show(added)).toBe(0);
    }
    return { sandbox, env: sandbox.env, server, oneTimePassword: printed.oneTimePassword };
  }

  it("prints a one-time password once (JSON when piped) and refuses a second init with exit 6", async () => {
    const sandbox = await makeSandbox();
    cleanups.push(() => sandbox.remove());
    const init = await runInProcess(["server", "init", "--admin-user", ADMIN], { env: sandbox.env });
    expect(init.exitCode, show(init)).toBe(0);
    const printed = json(init);
    expect(Object.keys(printed).sort()).toEqual(["dataDir", "id", "oneTimePassword", "userName"]);
    expect(printed.oneTimePassword.length).toBeGreaterThanOrEqual(15);
    expect(init.stderr).toMatch(/one-time password/i);
    // the password is on stdout only, never among the messages
    expect(init.stderr).not.toContain(printed.oneTimePassword);
    oneTimePasswords.push(printed.oneTimePassword);

    const again = await runInProcess(["server", "init", "--admin-user", "someone"], { env: sandbox.env });
    expect(again.exitCode, show(again)).toBe(6);
    expect(again.stdout).toBe("");
    expect(errorOf(again)).toMatchObject({ code: "conflict", exitCode: 6 });
    // and --password-stdin does not get around it
    const withPassword = await runInProcess(["server", "init", "--password-stdin"], {
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

    const list = await runInProcess(["events", "list"], { env });
    expect(list.exitCode, show(list)).toBe(0);
    expect(json(list)).toEqual([]);
    const firstLogin = await runInProcess(["auth", "first-login"], { env });
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

  it("without the second line fails naming it and keeps no session; the two lines then work", async () => {
    const { env, oneTimePassword } = await fresh();
    const first = await login(env, ADMIN, oneTimePassword);
    expect(first.exitCode, show(first)).toBe(2);
    expect(errorOf(first)).toMatchObject({ code: "usage", exitCode: 2 });
    expect(errorOf(first).message).toMatch(/stdin has no line 2: the new password/);
    const list = await runInProcess(["events", "list"], { env });
    expect(list.exitCode, show(list)).toBe(4);

    const again = await login(env, ADMIN, oneTimePassword, PASSWORD);
    expect(again.exitCode, show(again)).toBe(0);
    const after = await runInProcess(["events", "list"], { env });
    expect(after.exitCode, show(after)).toBe(0);
  });

  it("never shows a password anywhere but the init output", () => {
    expect(leaksOf(PASSWORD)).toEqual([]);
    for (const otp of oneTimePasswords) {
      expect(leaksOf(otp, (what) => what.startsWith("bizctl server init") && what.endsWith("(stdout)"))).toEqual([]);
    }
  });
});

describe("a data dir that was never initialised", () => {
  let sandbox: Sandbox;
  const lab = () => join(sandbox.root, "my lab");
  beforeAll(async () => {
    sandbox = await makeSandbox();
    const added = await runInProcess(["profile", "add", "lab", "--server", "embedded", "--data-dir", lab()], {
      env: sandbox.env,
    });
    expect(added.exitCode, show(added)).toBe(0);
  });
  afterAll(async () => sandbox?.remove());

  const login = ["auth", "login", "--user", ADMIN, "--password-stdin"];
  const scenarios = [
    { name: "auth login", args: login, input: `${PASSWORD}\n`, dir: "data", init: "bizctl server init" },
    { name: "api GET /health", args: ["api", "GET", "/health"], dir: "data", init: "bizctl server init" },
    { name: "events list without a token", args: ["events", "list"], dir: "data", init: "bizctl server init" },
    {
      name: "events list with BIZCTL_TOKEN",
      args: ["events", "list"],
      token: true,
      dir: "data",
      init: "bizctl server init",
    },
    {
      name: "users list with BIZCTL_TOKEN",
      args: ["users", "list"],
      token: true,
      dir: "data",
      init: "bizctl server init",
    },
    {
      name: "auth login on a profile's own data dir",
      args: ["--profile", "lab", ...login],
      input: `${PASSWORD}\n`,
      dir: "my lab",
      init: 'bizctl server init --data-dir "',
    },
  ];

  it.each(scenarios)("$name refuses (exit 2), names the dir and says server init; nothing is created", async (c) => {
    const env = c.token ? { ...sandbox.env, BIZCTL_TOKEN: "a.b.c" } : sandbox.env;
    const result = await runInProcess(c.args, { env, input: c.input });
    expect(result.exitCode, show(result)).toBe(2);
    expect(result.stdout).toBe("");
    const dir = join(sandbox.root, c.dir);
    expect(errorOf(result)).toMatchObject({
      code: "not_initialised",
      exitCode: 2,
      message: `The data dir ${dir} was never initialised: there is no database at ${join(dir, "bizctl.db")}.`,
      hint: expect.stringContaining(`run '${c.init}`),
    });
    expect(existsSync(dir)).toBe(false);
  });

  it("a database without users counts as never initialised", async () => {
    // what an older bizctl left behind: a database file (and keys), but no user
    mkdirSync(sandbox.dataDir);
    writeFileSync(join(sandbox.dataDir, "bizctl.db"), "");
    const result = await runInProcess(login, { env: sandbox.env, input: `${PASSWORD}\n` });
    expect(result.exitCode, show(result)).toBe(2);
    expect(errorOf(result).message).toBe(`The data dir ${sandbox.dataDir} was never initialised: it has no users.`);
    // server init is the one command that takes it, and then the rest work
    const init = await runInProcess(["server", "init", "--admin-user", ADMIN, "--password-stdin"], {
      env: sandbox.env,
      input: `${PASSWORD}\n`,
    });
    expect(init.exitCode, show(init)).toBe(0);
    const loggedIn = await runInProcess(login, { env: sandbox.env, input: `${PASSWORD}\n` });
    expect(loggedIn.exitCode, show(loggedIn)).toBe(0);
  });

  it("auth logout on a data dir that has gone forgets the token and warns (exit 0)", async () => {
    const env = { ...sandbox.env, BIZCTL_DATA_DIR: join(sandbox.root, "gone") };
    // logged in on the data dir of the test above, then pointed at one that does not exist
    const logout = await runInProcess(["auth", "logout"], { env });
    expect(logout.exitCode, show(logout)).toBe(0);
    expect(logout.stderr).toMatch(
      /^warning: forgot the token of profile 'default'.*was never initialised.*may still be live/,
    );
    const status = await runInProcess(["auth", "status"], { env: sandbox.env });
    expect(status.exitCode, show(status)).toBe(4);
  });
});
