/**
 * Issue 32 part 3: a token this machine forgets does not leave its session open. A second
 * `auth login` ends the session it replaces.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, bizctl, type Env, json, makeSandbox, PASSWORD, type Sandbox, show } from "../helpers/cli.js";

describe("sessions a forgotten token leaves open", () => {
  let sandbox: Sandbox;
  let env: Env;

  const run = async (args: string[], input?: string) => {
    const result = await bizctl(args, { env, input });
    expect(result.exitCode, show(result)).toBe(0);
    return result;
  };
  const login = (profile: string) =>
    run(["--profile", profile, "auth", "login", "--user", ADMIN, "--password-stdin"], `${PASSWORD}\n`);
  /** the admin's open sessions, seen from the default profile */
  const openSessions = async () => json<unknown[]>(await run(["users", "sessions", ADMIN])).length;
  const addProfile = (name: string) =>
    run(["profile", "add", name, "--server", "embedded", "--data-dir", sandbox.dataDir]);

  beforeAll(async () => {
    sandbox = await makeSandbox();
    env = sandbox.env;
    const init = await run(["server", "init", "--admin-user", ADMIN]);
    await run(["auth", "login", "--user", ADMIN, "--password-stdin"], `${json(init).oneTimePassword}\n${PASSWORD}\n`);
  }, 60_000);
  afterAll(async () => {
    await sandbox?.remove();
  });

  it("a second auth login ends the session it replaces", async () => {
    await addProfile("twice");
    await login("twice");
    const before = await openSessions();
    const again = await login("twice");
    expect(again.stderr).toContain("Ended the session this login replaces (profile 'twice')");
    expect(await openSessions()).toBe(before);
    // the new token works, the old one is gone from the server
    await run(["--profile", "twice", "auth", "status"]);
  });
});
