import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { processIO } from "../../src/cli/io.js";
import { buildProgram, groupNamed } from "../../src/main.js";

/** A command line builds only the group it names; these are the lines that must build them all. */

const SCENARIOS: [string, string[], string | undefined][] = [
  ["a group's command", ["events", "list", "--json"], "events"],
  ["a command of the groups group", ["groups", "restore", "Old Team"], "groups"],
  ["global options first", ["--json", "-q", "auth", "status"], "auth"],
  ["a global option's value is not the group", ["--profile", "events", "users", "list"], "users"],
  ["a short option's value", ["-o", "json", "resources", "list"], "resources"],
  ["a value joined to its option", ["--output=json", "--server=embedded", "oauth", "whoami"], "oauth"],
  ["the single command api", ["api", "GET", "/health"], "api"],
  ["help walks the whole tree", ["help", "events", "list"], undefined],
  ["completion walks the whole tree", ["completion", "bash"], undefined],
  ["a misspelt group is compared with every name", ["evnts", "list"], undefined],
  ["a word of the object's prototype is no group", ["constructor"], undefined],
  ["no command at all", ["--help"], undefined],
  ["nothing", [], undefined],
  ["after --", ["--", "events"], undefined],
];

describe("groupNamed", () => {
  it.each(SCENARIOS)("%s", (_name, argv, group) => {
    expect(groupNamed(argv)).toBe(group);
  });
});

describe("buildProgram", () => {
  it("builds every group, or only the one named", async () => {
    const all = await buildProgram(processIO());
    const names = all.commands.map((c) => c.name());
    expect(names).toEqual(
      expect.arrayContaining([
        "auth",
        "access",
        "oauth",
        "service-accounts",
        "resources",
        "users",
        "groups",
        "events",
        "audit",
      ]),
    );
    expect(names).toHaveLength(14);
    const events = await buildProgram(processIO(), "events");
    expect(events.commands.map((c) => c.name())).toEqual(["events"]);
    // the group is the same as in the whole tree: same subcommands, same options
    const shape = (group: Command) =>
      group.commands.map((c) => `${c.name()} ${c.options.map((o) => o.flags).join(" ")}`);
    expect(shape(events.commands[0]!)).toEqual(shape(all.commands.find((c) => c.name() === "events")!));
  });
});
