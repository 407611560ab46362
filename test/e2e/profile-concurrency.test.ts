import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bizctl, PASSWORD, ROOT, show, useServer } from "../helpers/cli.js";

/**
 * Many CLI processes writing profiles into one config dir at once: each reads the file, changes
 * its own profile and writes it back, so without a lock around that the last writer wins and the
 * others' profiles are lost.
 */

const WRITERS = 20;
/** per CLI run: twenty node processes at once take their time on a machine of two cores */
const SLOW = 120_000;

interface ConfigFile {
  currentProfile?: string;
  profiles: Record<string, { server: string; auth?: { token: string } }>;
}

const readConfig = (configDir: string): ConfigFile =>
  JSON.parse(readFileSync(join(configDir, "config.json"), "utf8")) as ConfigFile;
const modeOf = (file: string) => (statSync(file).mode & 0o777).toString(8);

describe("the profile file under concurrent writers", () => {
  const s = useServer({ login: false, serverArgs: ["--login-rate-limit", "1000"] });

  it(`${WRITERS} concurrent 'profile add' and 'auth login' runs leave a valid 0600 file holding every profile`, async () => {
    // the logins go to profiles that exist before: each login adds its token to its own profile.
    // Fewer logins than the back-off's threshold: proofs of one account checked at the same moment
    // each count until answered, and the fifth on is refused (docs/security.md)
    const logins = Array.from({ length: 4 }, (_, i) => `login-${i}`);
    const adds = Array.from({ length: WRITERS - logins.length }, (_, i) => `added-${i}`);
    for (const name of logins) {
      const added = await bizctl(["profile", "add", name, "--server", s.server.url], { env: s.env });
      expect(added.exitCode, show(added)).toBe(0);
    }
    const runs = await Promise.all([
      ...adds.map((name) =>
        bizctl(["profile", "add", name, "--server", s.server.url], { env: s.env, timeoutMs: SLOW }),
      ),
      ...logins.map((name) =>
        bizctl(["--profile", name, "auth", "login", "--user", "admin", "--password-stdin"], {
          env: s.env,
          input: `${PASSWORD}\n`,
          timeoutMs: SLOW,
        }),
      ),
    ]);
    for (const run of runs) expect(run.exitCode, show(run)).toBe(0);

    const file = join(s.sandbox.configDir, "config.json");
    expect(modeOf(file)).toBe("600");
    const config = readConfig(s.sandbox.configDir);
    const missing = adds.filter((name) => config.profiles[name]?.server !== s.server.url);
    const loggedOut = logins.filter((name) => typeof config.profiles[name]?.auth?.token !== "string");
    expect({ missing, loggedOut }).toEqual({ missing: [], loggedOut: [] });
  }, 240_000);

  it("a lock left by a killed process is taken over, and the write goes through", async () => {
    // a config dir of its own: nothing of the test above (a run it timed out) is left in it
    const configDir = join(s.sandbox.root, "config-killed");
    const env = { ...s.env, BIZCTL_CONFIG_DIR: configDir };
    await mkdir(configDir, { recursive: true });
    // a process that takes the profile file's lock as the CLI does (proper-lockfile's lock
    // directory beside the file), and is killed holding it
    const holder = spawn(
      "node",
      [
        "--input-type=module",
        "-e",
        `const { default: lockfile } = await import("proper-lockfile");
         await lockfile.lock(process.argv[1], { realpath: false });
         console.log("locked");
         setInterval(() => {}, 1000);`,
        join(configDir, "config.json"),
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((done, fail) => {
      holder.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("locked") && done());
      holder.once("exit", (code) => fail(new Error(`the lock holder exited (${code}) before locking`)));
    });
    const exited = new Promise((done) => holder.once("exit", done));
    holder.kill("SIGKILL");
    await exited;

    const added = await bizctl(["profile", "add", "after-kill", "--server", s.server.url], { env });
    expect(added.exitCode, show(added)).toBe(0);
    expect(readConfig(configDir).profiles["after-kill"]?.server).toBe(s.server.url);
  }, 60_000);
});
