/**
 * Issue 32 part 3: a token this machine forgets does not leave its session open. A second
 * `auth login` ends the session it replaces; `profile remove` logs out when asked (a prompt on
 * a terminal, --logout in a script), says so when the server cannot be reached, and says which
 * profile is current afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN,
  bizctl,
  type Env,
  errorOf,
  json,
  makeSandbox,
  PASSWORD,
  type Sandbox,
  show,
  startServer,
} from "../helpers/cli.js";
import { inTerminal } from "../helpers/pty.js";

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

  it("auth login --with-token ends the session it replaces too", async () => {
    await addProfile("script");
    const before = await openSessions();
    await login("script");
    const created = json(await run(["--profile", "script", "auth", "tokens", "create", "--name", "nightly", "--json"]));
    const kept = await run(["--profile", "script", "auth", "login", "--with-token"], `${created.token}\n`);
    expect(kept.stderr).toContain("Ended the session this login replaces (profile 'script')");
    expect(await openSessions()).toBe(before);
  });

  const REMOVALS: { name: string; flags: string[]; ended: boolean; stderr: RegExp }[] = [
    { name: "--logout", flags: ["--logout"], ended: true, stderr: /Logged out of embedded \(profile 'gone'\)/ },
    { name: "--keep-session", flags: ["--keep-session"], ended: false, stderr: /^Removed profile/ },
    {
      name: "neither, in a script: kept, with a warning",
      flags: [],
      ended: false,
      stderr:
        /warning: profile 'gone' kept a live token; its session on embedded stays open until .* \(--logout ends it/,
    },
  ];

  it.each(REMOVALS)("profile remove $name", async (removal) => {
    await addProfile("gone");
    await login("gone");
    const before = await openSessions();
    const removed = await run(["profile", "remove", "gone", ...removal.flags]);
    expect(removed.stderr).toMatch(removal.stderr);
    expect(removed.stderr).toContain("Removed profile 'gone'; the current profile is 'default'.");
    expect(await openSessions()).toBe(removal.ended ? before - 1 : before);
  });

  it("profile remove of the current profile says which one is current now", async () => {
    await addProfile("work");
    await run(["profile", "use", "work"]);
    const removed = await run(["profile", "remove", "work"]);
    expect(removed.stderr).toContain("Removed profile 'work'; the current profile is 'default'.");
  });

  it("profile remove --logout --keep-session is refused and removes nothing", async () => {
    await addProfile("both");
    const refused = await bizctl(["profile", "remove", "both", "--logout", "--keep-session"], { env });
    expect(refused.exitCode, show(refused)).toBe(2);
    expect(errorOf(refused).message).toContain("contradict");
    expect(json(await run(["profile", "list"])).map((p: { name: string }) => p.name)).toContain("both");
  });

  it("on a terminal, profile remove asks, and yes ends the session", async () => {
    await addProfile("asked");
    await login("asked");
    const before = await openSessions();
    const result = await inTerminal(env, ["profile", "remove", "asked"], [{ expect: "End its session", send: "y" }]);
    expect(result.error, result.output).toBeUndefined();
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toContain("Logged out of embedded");
    expect(await openSessions()).toBe(before - 1);
  });

  it("a server that cannot be reached: the profile goes, and the note says the session may be live", async () => {
    const server = await startServer(sandbox.dataDir, { env });
    try {
      await run(["profile", "add", "far", "--server", server.url]);
      await login("far");
    } finally {
      await server.stop();
    }
    const removed = await run(["profile", "remove", "far", "--logout"]);
    expect(removed.stderr).toMatch(
      /warning: the session of profile 'far' was not ended on the server \(.+\); it may still be live until /,
    );
    expect(json(await run(["profile", "list"])).map((p: { name: string }) => p.name)).not.toContain("far");
  });
});
