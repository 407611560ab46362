import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initAndLogin, json, MODES, type Session, show } from "../helpers/cli.js";
import { inTerminal } from "../helpers/pty.js";

/** Issue 15 part 4: compact tables, identifiers never cut, a footer when more pages exist, empty results said. */

const NO_COLOR = { NO_COLOR: "1" };
const LONG_CODE = "QUARTERLY-BUSINESS-REVIEW-2027-Q1";
const LONG_NAME = "A quarterly business review with every regional director and their deputies";

describe.each(MODES)("tables (%s)", (mode) => {
  let s: Session;
  beforeAll(async () => {
    s = await initAndLogin(mode);
    const seed = Array.from({ length: 24 }, (_, i) => ({
      code: i === 0 ? LONG_CODE : `T${String(i + 1).padStart(2, "0")}`,
      name: `${LONG_NAME} ${i + 1}`,
      startsAt: `2027-04-${String(i + 1).padStart(2, "0")}T10:00:00Z`,
      location: "The large conference room on the fourth floor of the north building",
    }));
    const file = join(s.sandbox.root, "seed.json");
    await writeFile(file, JSON.stringify(seed));
    const imported = await s.run(["events", "import", file]);
    expect(imported.exitCode, show(imported)).toBe(0);
    for (const name of ["one", "two", "three"]) {
      const room = await s.run(["resources", "create", "--set", "resourceType=Room", "--set", `name=${name}`]);
      expect(room.exitCode, show(room)).toBe(0);
    }
  }, 180_000);
  afterAll(async () => s?.close());

  it.each([60, 80, 100])(
    "at %i columns a code is never cut, one line a record, a footer on stderr",
    async (columns) => {
      const result = await inTerminal({ ...s.env, ...NO_COLOR, PTY_COLUMNS: String(columns) }, ["events", "list"]);
      expect(result.exitCode, result.output).toBe(0);
      const lines = result.output.split(/\r?\n/).filter((l) => l.trim() !== "");
      expect(lines[0]).toMatch(/^code +name/);
      expect(
        lines.find((l) => l.startsWith(LONG_CODE)),
        result.output,
      ).toBeDefined();
      expect(result.output).not.toMatch(/[│┌─]/);
      // the header, 20 events and the footer: no rule under each row
      expect(lines).toHaveLength(22);
      expect(lines.at(-1)).toBe("20 of 24: --page 2, or --all");
      // at 60 the six other columns are down to 5 characters and the row is let out wider
      if (columns >= 80) for (const line of lines) expect(line.length).toBeLessThanOrEqual(columns);
      else expect(lines[1]!.length).toBeGreaterThan(columns);
    },
  );

  it("a user id is never cut at 60 columns", async () => {
    const result = await inTerminal({ ...s.env, ...NO_COLOR, PTY_COLUMNS: "60" }, ["users", "list"]);
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toContain(s.userId);
  });

  it("resources say the next --start-index", async () => {
    const result = await inTerminal({ ...s.env, ...NO_COLOR }, ["resources", "list", "--type", "Room", "--count", "2"]);
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toMatch(/^2 of 3: --start-index 3, or --all\r?$/m);
  });

  it.each([
    ["the last page", ["events", "list", "--page", "2"]],
    ["--all", ["events", "list", "--all"]],
  ])("no footer on %s", async (_name, args) => {
    const result = await inTerminal({ ...s.env, ...NO_COLOR }, args);
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).not.toMatch(/ of \d+: /);
  });

  it("piped, a table is compact too and stderr has no footer", async () => {
    const result = await s.run(["events", "list", "-o", "table"]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(result.stdout.trimEnd().split("\n")).toHaveLength(21);
    expect(result.stdout).toContain(LONG_CODE);
    expect(result.stderr).toBe("");
    const page = await s.run(["events", "list"]);
    expect(json(page)).toHaveLength(20);
    expect(page.stderr).toBe("");
  });

  it.each([
    ["events", ["events", "list", "--filter", 'code eq "NONE"'], "No events."],
    ["users", ["users", "list", "--filter", 'userName eq "nobody"'], "No users."],
    ["resources", ["resources", "list", "--type", "Nothing"], "No resources."],
  ])("an empty list of %s says so on stderr and exits 0", async (_name, args, said) => {
    const piped = await s.run(args);
    expect(piped.exitCode, show(piped)).toBe(0);
    expect(json(piped)).toEqual([]);
    expect(piped.stderr.trim()).toBe(said);
    const terminal = await inTerminal({ ...s.env, ...NO_COLOR }, args);
    expect(terminal.exitCode, terminal.output).toBe(0);
    expect(terminal.output.trim()).toBe(said);
    expect((await s.run([...args, "-q"])).stderr).toBe("");
  });
});
