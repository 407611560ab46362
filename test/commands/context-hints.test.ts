/**
 * Issue 32 part 3: a hint or message that names a command names the profile in use, so that the
 * copied command acts on the same server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, bizctl, type Env, json, makeSandbox, PASSWORD, type Sandbox, show } from "../helpers/cli.js";

describe("hints carry the profile in use", () => {
  let sandbox: Sandbox;
  let env: Env;

  beforeAll(async () => {
    sandbox = await makeSandbox();
    env = sandbox.env;
    const init = await bizctl(["server", "init", "--admin-user", ADMIN], { env });
    expect(init.exitCode, show(init)).toBe(0);
    // the current profile is logged in; "lab" (the same data dir) is not, and "staff" is
    const login = await bizctl(["auth", "login", "--user", ADMIN, "--password-stdin"], {
      env,
      input: `${json(init).oneTimePassword}\n${PASSWORD}\n`,
    });
    expect(login.exitCode, show(login)).toBe(0);
    // "gone" points at a port nothing listens on
    const gone = await bizctl(["profile", "add", "gone", "--server", "http://127.0.0.1:1"], { env });
    expect(gone.exitCode, show(gone)).toBe(0);
    for (const name of ["lab", "staff"]) {
      const added = await bizctl(["profile", "add", name, "--server", "embedded", "--data-dir", sandbox.dataDir], {
        env,
      });
      expect(added.exitCode, show(added)).toBe(0);
    }
    const staff = await bizctl(["--profile", "staff", "auth", "login", "--user", ADMIN, "--password-stdin"], {
      env,
      input: `${PASSWORD}\n`,
    });
    expect(staff.exitCode, show(staff)).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await sandbox?.remove();
  });

  const SCENARIOS: { name: string; args: string[]; env?: Env; want: string }[] = [
    {
      name: "not logged in, --profile",
      args: ["--profile", "lab", "events", "list"],
      want: "run 'bizctl --profile lab auth login'",
    },
    {
      name: "not logged in, --profile=",
      args: ["--profile=lab", "events", "list"],
      want: "run 'bizctl --profile lab auth login'",
    },
    {
      name: "not logged in, BIZCTL_PROFILE",
      args: ["events", "list"],
      env: { BIZCTL_PROFILE: "lab" },
      want: "run 'bizctl --profile lab auth login'",
    },
    {
      name: "audit tail's resume cursor",
      args: ["--profile", "staff", "audit", "tail", "-n", "1"],
      want: "Resume with: bizctl --profile staff audit tail --follow --since ",
    },
    {
      name: "the current profile needs no flag",
      args: ["audit", "tail", "-n", "1"],
      want: "Resume with: bizctl audit tail --follow --since ",
    },
    // `profile show` without a name shows the current profile, not the one chosen
    {
      name: "server unreachable, --profile",
      args: ["--profile", "gone", "events", "list"],
      env: { BIZCTL_TOKEN: "unused" },
      want: "check the profile's server URL ('bizctl profile show gone')",
    },
    {
      name: "server unreachable, BIZCTL_PROFILE",
      args: ["events", "list"],
      env: { BIZCTL_PROFILE: "gone", BIZCTL_TOKEN: "unused" },
      want: "check the profile's server URL ('bizctl profile show gone')",
    },
    {
      name: "a command on profiles is left alone",
      args: ["--profile", "nowhere", "events", "list"],
      want: "see 'bizctl profile list'",
    },
  ];

  it.each(SCENARIOS)("$name", async (scenario) => {
    const result = await bizctl(scenario.args, { env: { ...env, ...scenario.env } });
    expect(result.stderr, show(result)).toContain(scenario.want);
  });
});
