import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, makeSandbox, ROOT, type Sandbox } from "../helpers/cli.js";
import { expectScenario, type InProcessSession, runInProcess, type Scenario } from "../helpers/in-process.js";

/** Help, usage errors and completion scripts: no server involved. */

/** The committed completion scripts, which `bizctl completion SHELL` must reproduce exactly. */
const COMPLETIONS = { bash: "bizctl.bash", zsh: "_bizctl", fish: "bizctl.fish" } as const;

describe("help, usage and completion", () => {
  let sandbox: Sandbox;
  /** no login: these commands read nothing but the command tree */
  let s: Pick<InProcessSession, "run">;
  beforeAll(async () => {
    sandbox = await makeSandbox();
    s = { run: (args, options) => runInProcess(args, { ...options, env: { ...sandbox.env, ...options?.env } }) };
  });
  afterAll(async () => sandbox?.remove());

  const contains = (words: string[]) => (text: string) => {
    for (const word of words) expect(text).toContain(word);
  };

  const SCENARIOS: Scenario[] = [
    {
      name: "--help lists the groups and the global options on stdout",
      args: ["--help"],
      wantExit: 0,
      wantStdout: contains([
        "auth",
        "events",
        "server",
        "profile",
        "api",
        "completion",
        "--profile",
        "--output",
        "--no-input",
      ]),
    },
    {
      name: "a verb's --help has its examples",
      args: ["events", "create", "--help"],
      wantExit: 0,
      wantStdout: contains(["Examples:", "--set"]),
    },
    { name: "help VERB", args: ["help", "events", "create"], wantExit: 0, wantStdout: contains(["--file"]) },
    { name: "no command: the usage on stderr", args: [], wantExit: 2, wantStdout: "", wantStderr: /Usage: bizctl/ },
    {
      name: "help exit-codes lists 0 to 8 and 130",
      args: ["help", "exit-codes"],
      wantExit: 0,
      wantStdout: (stdout) => {
        const codes = [...stdout.matchAll(/^\s*(\d+)\s+\S/gm)].map((m) => Number(m[1]));
        expect(codes).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 130]);
        expect(stdout).toMatch(/^\s*4\s+not authenticated/m);
        expect(stdout).toMatch(/^\s*130\s+interrupted/m);
      },
    },
    { name: "an unknown shell", args: ["completion", "tcsh"], wantExit: 2 },
  ];

  it.each(SCENARIOS)("$name", async (scenario) => {
    await expectScenario(s, scenario);
  });

  /** [the command line, what the message says, what the hint names] of the usage errors */
  const USAGE: [string[], (string | RegExp)[], RegExp?][] = [
    [["evnts", "list"], ["Did you mean events?"]],
    [["events", "lst"], ["Did you mean list?"]],
    [
      ["events", "list", "--pagesize", "2"],
      [/unknown option '--pagesize'/, "--page-size"],
    ],
    [["help", "nosuch"], [/^No help topic or command 'nosuch'\.$/], /exit-codes, auth, oauth/],
    [["help", "events", "nosuch"], [/^No help topic or command 'nosuch' under 'events'\.$/], /list, get/],
  ];

  it.each(USAGE)("%j exits 2 and says what is known", async (args, says, hint) => {
    const result = await expectScenario(s, { name: "", args, wantExit: 2, wantStdout: "" });
    const error = errorOf(result);
    expect(error).toMatchObject({ code: "usage", exitCode: 2 });
    for (const said of says) {
      if (typeof said === "string") expect(error.message).toContain(said);
      else expect(error.message).toMatch(said);
    }
    if (hint) expect(error.hint).toMatch(hint);
  });

  it.each(Object.entries(COMPLETIONS))("completion %s equals the committed completions/%s", async (shell, file) => {
    const result = await expectScenario(s, {
      name: shell,
      args: ["completion", shell],
      wantExit: 0,
      wantStderr: "",
    });
    const committed = readFileSync(join(ROOT, "completions", file), "utf8");
    expect(result.stdout === committed, `completions/${file} is stale; regenerate it with: npm run completions`).toBe(
      true,
    );
  });
});
