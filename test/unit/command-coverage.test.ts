/**
 * Every command is run by some test: each leaf of the command tree (the paths completions are
 * made from) must appear in a test source as the words a test runs, either as argv
 * (`"users", "tokens", "revoke"`) or in a command line (`users tokens revoke`). A command that
 * no test names fails here with its path, so that a new command arrives with its test.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { processIO } from "../../src/cli/io.js";
import { buildProgram } from "../../src/main.js";

const TEST_ROOT = join(import.meta.dirname, "..");
const SELF = "unit/command-coverage.test.ts";

const hidden = (command: Command) => (command as Command & { _hidden?: boolean })._hidden === true;

/** The paths of the commands that run something: the leaves of the tree, hidden ones left out. */
function leaves(command: Command, path: string[] = []): string[][] {
  const subcommands = command.commands.filter((c) => !hidden(c) && c.name() !== "help");
  if (path.length > 0 && subcommands.length === 0) return [path];
  return subcommands.flatMap((sub) => leaves(sub, [...path, sub.name()]));
}

const literal = (word: string) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The path as argv (quoted words joined by commas) or as a command line (words joined by spaces). */
const runOf = (path: string[]) =>
  new RegExp(
    `["'\`]${path.map(literal).join(`["'\`]\\s*,\\s*["'\`]`)}["'\`]|(?:^|[\\s"'\`])${path.map(literal).join(" +")}(?=[\\s"'\`]|$)`,
    "m",
  );

const testSources = () =>
  readdirSync(TEST_ROOT, { recursive: true, encoding: "utf8" })
    .filter((name) => /\.(ts|mjs)$/.test(name) && name !== SELF)
    .map((name) => readFileSync(join(TEST_ROOT, name), "utf8"));

describe("every command is run by a test", () => {
  it("finds each leaf of the command tree in a test source", async () => {
    const paths = leaves(await buildProgram(processIO()));
    expect(paths.length).toBeGreaterThan(40);
    const sources = testSources();
    const uncovered = paths
      .filter((path) => !sources.some((source) => runOf(path).test(source)))
      .map((p) => p.join(" "));
    expect(uncovered, `commands no test runs: ${uncovered.join(", ")}`).toEqual([]);
  });

  // the guard itself
  it.each([
    ['run(["users", "tokens", "revoke", id])', true],
    ["await s.run(['users','tokens', 'revoke'])", true],
    ["bizctl users tokens revoke --all", true],
    ['run(["users", "tokens", "list"])', false],
    ['run(["users", "tokens"])', false],
    ["the users' tokens: revoke them", false],
  ])("%s names users tokens revoke: %s", (source, found) => {
    expect(runOf(["users", "tokens", "revoke"]).test(source)).toBe(found);
  });
});
