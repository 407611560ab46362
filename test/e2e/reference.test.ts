/**
 * The README's command reference, `bizctl help` and the code name the same commands and flags:
 * walked over the command tree that main.ts builds, so commands added later are covered too.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { processIO } from "../../src/cli/io.js";
import { buildProgram } from "../../src/main.js";
import { bizctl, ROOT, show } from "../helpers/cli.js";

const program = await buildProgram(processIO());

function walk(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  return [
    ...(path.length ? [{ path, command }] : []),
    ...command.commands.flatMap((sub) => walk(sub, [...path, sub.name()])),
  ];
}

const COMMANDS = walk(program);
const longFlags = (command: Command) => command.options.map((o) => o.long).filter((l): l is string => Boolean(l));

/** The section `## Command reference`, with optional words written as `[list]` read as `list`. */
function reference(): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("## Command reference");
  const end = readme.indexOf("\n## ", start + 1);
  expect(start, "README.md has a '## Command reference'").toBeGreaterThanOrEqual(0);
  return readme.slice(start, end).replace(/\[(\w[\w-]*)\]/g, "$1");
}

describe("the README's command reference matches the code", () => {
  const text = reference();

  it.each(COMMANDS.map(({ path, command }) => [path.join(" "), command] as const))(
    "names the command '%s' and its flags",
    (name, command) => {
      expect(text, `README's command reference lacks '${name}'`).toContain(name);
      for (const flag of longFlags(command)) {
        // a negatable flag (--no-input) may be written either way
        const named = text.includes(flag) || text.includes(flag.replace(/^--no-/, "--"));
        expect(named, `README's command reference lacks ${flag} of '${name}'`).toBe(true);
      }
    },
  );

  it("names every global option", () => {
    for (const flag of longFlags(program)) expect(text, `README lacks global ${flag}`).toContain(flag);
  });

  it("names no flag that no command has", () => {
    const known = new Set(["--help"]);
    for (const { command } of [{ command: program }, ...COMMANDS]) {
      for (const flag of longFlags(command)) {
        known.add(flag);
        known.add(flag.replace(/^--no-/, "--"));
      }
    }
    const stale = [...text.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)].map((m) => m[0]).filter((f) => !known.has(f));
    expect([...new Set(stale)]).toEqual([]);
  });
});

describe("bizctl help matches the code", () => {
  const groups = program.commands.filter((c) => c.commands.length > 0);

  it("the top-level help lists every command", async () => {
    const result = await bizctl(["help"]);
    expect(result.exitCode, show(result)).toBe(0);
    for (const command of program.commands) expect(result.stdout).toMatch(new RegExp(`^  ${command.name()}\\b`, "m"));
  });

  it.each(groups.map((g) => [g.name(), g] as const))("bizctl help %s lists its commands", async (name, group) => {
    const result = await bizctl(["help", name]);
    expect(result.exitCode, show(result)).toBe(0);
    for (const sub of group.commands) expect(result.stdout).toMatch(new RegExp(`^  ${sub.name()}\\b`, "m"));
  });

  it.each(
    COMMANDS.filter(({ command }) => command.commands.length === 0).map(
      ({ path, command }) => [path.join(" "), command] as const,
    ),
  )("the help of '%s' shows each of its flags", (_name, command) => {
    const help = command.helpInformation();
    for (const flag of longFlags(command)) expect(help).toContain(flag);
  });
});
