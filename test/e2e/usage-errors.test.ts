import { beforeAll, describe, expect, it } from "vitest";
import { bizctl, errorOf, makeSandbox, type Sandbox } from "../helpers/cli.js";
import { inTerminal } from "../helpers/pty.js";

/**
 * Issue 47 (2): a mistyped command or option is one line on a terminal, with Commander's
 * suggestion in it (not a `^J` where its line break was), and the hint names the help of the
 * command that refused the line; piped, the same as one JSON object.
 */
const SCENARIOS: { args: string[]; message: string; hint: string }[] = [
  { args: ["lst"], message: "unknown command 'lst'", hint: "see 'bizctl --help'" },
  {
    args: ["users", "lst"],
    message: "unknown command 'lst' (Did you mean list?)",
    hint: "see 'bizctl users --help'",
  },
  {
    args: ["users", "list", "--filtr", "x"],
    message: "unknown option '--filtr' (Did you mean --filter?)",
    hint: "see 'bizctl users list --help'",
  },
  {
    args: ["auth", "tokens", "lst"],
    message: "unknown command 'lst' (Did you mean list?)",
    hint: "see 'bizctl auth tokens --help'",
  },
];

describe("usage errors name the subcommand's help, on one line", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await makeSandbox();
  });

  describe.each([80, 200])("on a terminal of %i columns", (columns) => {
    it.each(SCENARIOS)("bizctl $args", async ({ args, message, hint }) => {
      const result = await inTerminal({ ...sandbox.env, PTY_COLUMNS: String(columns), NO_COLOR: "1" }, args);
      expect(result.exitCode).toBe(2);
      expect(result.raw).not.toContain("^J");
      expect(result.output.trim()).toBe(`error: ${message} — ${hint}`);
    });
  });

  it.each(SCENARIOS)("piped: bizctl $args is one JSON object", async ({ args, message, hint }) => {
    const result = await bizctl(args, { env: sandbox.env });
    expect(result.exitCode).toBe(2);
    expect(errorOf(result)).toMatchObject({ code: "usage", message, hint, exitCode: 2 });
  });
});
