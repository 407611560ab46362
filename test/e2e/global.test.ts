import { readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, bizctl, type Env, errorOf, makeSandbox, ROOT, type Sandbox, show } from "../helpers/cli.js";

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };

/** The committed completion scripts, which `bizctl completion SHELL` must reproduce exactly. */
const COMPLETIONS = { bash: "bizctl.bash", zsh: "_bizctl", fish: "bizctl.fish" } as const;

describe("global behaviour (no server involved)", () => {
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

  it("--help lists the groups and the global options on stdout, exit 0", async () => {
    const result = await bizctl(["--help"], { env });
    expect(result.exitCode, show(result)).toBe(0);
    for (const word of [
      "auth",
      "events",
      "server",
      "profile",
      "api",
      "completion",
      "--profile",
      "--output",
      "--no-input",
    ]) {
      expect(result.stdout).toContain(word);
    }
    const verb = await bizctl(["events", "create", "--help"], { env });
    expect(verb.exitCode, show(verb)).toBe(0);
    expect(verb.stdout).toContain("Examples:");
    expect(verb.stdout).toContain("--set");
    const viaHelp = await bizctl(["help", "events", "create"], { env });
    expect(viaHelp.exitCode, show(viaHelp)).toBe(0);
    expect(viaHelp.stdout).toContain("--file");
  });

  it("without a command prints the usage on stderr and exits 2", async () => {
    const result = await bizctl([], { env });
    expect(result.exitCode, show(result)).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("Usage: bizctl");
  });

  it("an unknown command or option exits 2 with a suggestion", async () => {
    const command = await bizctl(["evnts", "list"], { env });
    expect(command.exitCode, show(command)).toBe(2);
    expect(command.stdout).toBe("");
    const error = errorOf(command);
    expect(error).toMatchObject({ code: "usage", exitCode: 2 });
    expect(error.message).toContain("Did you mean events?");

    const verb = await bizctl(["events", "lst"], { env });
    expect(verb.exitCode, show(verb)).toBe(2);
    expect(errorOf(verb).message).toContain("Did you mean list?");

    const option = await bizctl(["events", "list", "--pagesize", "2"], { env });
    expect(option.exitCode, show(option)).toBe(2);
    expect(errorOf(option).message).toMatch(/unknown option '--pagesize'/);
    expect(errorOf(option).message).toContain("--page-size");
  });

  it("help exit-codes lists 0 to 8 and 130", async () => {
    const result = await bizctl(["help", "exit-codes"], { env });
    expect(result.exitCode, show(result)).toBe(0);
    const codes = [...result.stdout.matchAll(/^\s*(\d+)\s+\S/gm)].map((m) => Number(m[1]));
    expect(codes).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 130]);
    expect(result.stdout).toMatch(/^\s*4\s+not authenticated/m);
    expect(result.stdout).toMatch(/^\s*130\s+interrupted/m);
  });

  it.each([
    { args: ["help", "nosuch"], message: "No help topic or command 'nosuch'.", hint: /exit-codes, auth, oauth/ },
    {
      args: ["help", "events", "nosuch"],
      message: "No help topic or command 'nosuch' under 'events'.",
      hint: /list, get/,
    },
  ])("$args exits 2 naming the unknown topic and the known ones", async ({ args, message, hint }) => {
    const result = await bizctl(args, { env });
    expect(result.exitCode, show(result)).toBe(2);
    expect(result.stdout).toBe("");
    expect(errorOf(result)).toMatchObject({ code: "usage", message, hint: expect.stringMatching(hint) });
  });

  it.each(Object.entries(COMPLETIONS))("completion %s equals the committed completions/%s", async (shell, file) => {
    const result = await bizctl(["completion", shell], { env });
    expect(result.exitCode, show(result)).toBe(0);
    expect(result.stderr).toBe("");
    const committed = readFileSync(join(ROOT, "completions", file), "utf8");
    expect(
      result.stdout === committed,
      `completions/${file} is stale; regenerate it with: node bin/bizctl.js completion ${shell} > completions/${file}`,
    ).toBe(true);
  });

  it("an unknown shell exits 2", async () => {
    const result = await bizctl(["completion", "tcsh"], { env });
    expect(result.exitCode, show(result)).toBe(2);
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
