import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, bizctl, type Env, json, makeSandbox, ROOT, type Sandbox, show } from "../helpers/cli.js";

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };

/**
 * What only the binary shows, no server involved: the version it answers without loading the
 * command tree, a closed pipe, the working directory, the bash completion script in bash. Help,
 * usage errors and the completion scripts' text: test/commands/help.test.ts.
 */
describe("global behaviour of the binary", () => {
  let sandbox: Sandbox;
  let env: Env;
  beforeAll(async () => {
    sandbox = await makeSandbox();
    env = sandbox.env;
  });
  afterAll(async () => sandbox?.remove());

  it("--version and -V print the package version and exit 0", async () => {
    for (const flag of ["--version", "-V"]) {
      const result = await bizctl([flag], { env });
      expect(result.exitCode, show(result)).toBe(0);
      expect(result.stdout).toBe(`${pkg.version}\n`);
      expect(result.stderr).toBe("");
    }
  });

  it("a relative data dir given to profile add is kept as the absolute one it meant", async () => {
    const relative = await bizctl(["profile", "add", "rel", "--server", "embedded", "--data-dir", "rel-data"], {
      env,
      cwd: sandbox.root,
    });
    expect(relative.exitCode, show(relative)).toBe(0);
    const shown = await bizctl(["profile", "show", "rel"], { env });
    expect(json(shown).dataDir).toBe(join(sandbox.root, "rel-data"));
  });

  it("the bash completion parses and completes group verbs and options", async () => {
    const script = join(ROOT, "completions", "bizctl.bash");
    const complete = async (...words: string[]) => {
      const line = ["bizctl", ...words].map((w) => `'${w}'`).join(" ");
      const { stdout } = await execa(
        "bash",
        [
          "-c",
          `source "$0"; COMP_WORDS=(${line}); COMP_CWORD=${words.length}; _bizctl; printf '%s\\n' "\${COMPREPLY[@]}"`,
          script,
        ],
        { extendEnv: false, env: env },
      );
      return stdout.split("\n").filter(Boolean);
    };
    expect(await complete("ev")).toEqual(["events"]);
    expect(await complete("events", "")).toEqual(expect.arrayContaining(["list", "get", "create", "update", "delete"]));
    expect(await complete("--json", "events", "list", "--pa")).toEqual(["--page", "--page-size"]);
    expect(await complete("auth", "change-password", "--pass")).toEqual(["--password-stdin"]);
  });

  it("the bash completion completes values: -o formats, and profile names from the profiles file", async () => {
    const added = await bizctl(["profile", "add", "staging", "--server", "https://staging.example.com"], { env });
    expect(added.exitCode, show(added)).toBe(0);
    // the script asks bizctl itself for the profiles: the one on PATH
    const shims = join(sandbox.root, "shims");
    mkdirSync(shims, { recursive: true });
    writeFileSync(join(shims, "bizctl"), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(shims, "bizctl"), 0o755);
    const script = join(ROOT, "completions", "bizctl.bash");
    const complete = async (pathDirs: string, ...words: string[]) => {
      const line = ["bizctl", ...words].map((w) => `'${w}'`).join(" ");
      const { stdout } = await execa(
        "bash",
        [
          "-c",
          `source "$0"; COMP_WORDS=(${line}); COMP_CWORD=${words.length}; _bizctl; printf '%s\\n' "\${COMPREPLY[@]}"`,
          script,
        ],
        { extendEnv: false, env: { ...env, PATH: `${pathDirs}:${env.PATH}` } },
      );
      return stdout.split("\n").filter(Boolean);
    };
    expect(await complete(shims, "-o", "")).toEqual(["table", "json", "ndjson", "csv", "yaml"]);
    expect(await complete(shims, "users", "list", "--output", "nd")).toEqual(["ndjson"]);
    expect(await complete(shims, "--profile", "st")).toEqual(["staging"]);
    expect(await complete(shims, "profile", "use", "")).toEqual(expect.arrayContaining(["default", "staging"]));
    // no bizctl on PATH: no profile names, and nothing printed
    expect(await complete(join(sandbox.root, "nowhere"), "--profile", "")).toEqual([]);
  });
  it("a reader that closes the pipe early ends the command quietly, exit 0", async () => {
    // `true` reads nothing and exits at once, so every write bizctl makes meets a closed pipe
    const { stdout, stderr } = await execa(
      "bash",
      ["-c", `node "$0" completion bash | true; echo "$\{PIPESTATUS[0]}"`, BIN],
      {
        extendEnv: false,
        env,
      },
    );
    expect(stderr).toBe("");
    expect(stdout.trim()).toBe("0");
  });
});
