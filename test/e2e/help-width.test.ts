import { describe, expect, it } from "vitest";
import { cleanEnv } from "../helpers/cli.js";
import { inTerminal } from "../helpers/pty.js";

/**
 * Issue 47 (12): help was wrapped near 98 columns whatever the terminal (the prose after the
 * options kept its line breaks from the source), and a subcommand's help did not show the global
 * options. The built binary on a terminal of 80 and of 200 columns.
 */
describe.each([80, 200])("help on a terminal of %i columns", (columns) => {
  it("fits the width and uses it, with the global options", async () => {
    const result = await inTerminal({ ...cleanEnv(), PTY_COLUMNS: String(columns), NO_COLOR: "1" }, [
      "users",
      "sync",
      "--help",
    ]);
    expect(result.exitCode, result.output).toBe(0);
    const lines = result.output.split(/\r?\n/);
    // an example is a command line to copy: it is never broken
    const prose = lines.filter((line) => !line.startsWith("  $ "));
    for (const line of prose) expect(line.length, line).toBeLessThanOrEqual(columns);
    const paragraph = lines.find((line) => line.startsWith("The file is read as"))!;
    if (columns === 200) expect(paragraph.length, result.output).toBeGreaterThan(150);
    expect(lines).toContain("Global Options:");
    expect(
      lines.some((line) => /^ {2}--profile <name> +profile to use/.test(line)),
      result.output,
    ).toBe(true);
  });
});
