import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { MODES, show } from "../helpers/cli.js";
import { expectScenario, type Scenario, useInProcessSession } from "../helpers/in-process.js";

/** Issue 15 part 4: compact tables, identifiers never cut, a footer when more pages exist, empty results said. */

const NO_COLOR = { NO_COLOR: "1" };
const LONG_CODE = "QUARTERLY-BUSINESS-REVIEW-2027-Q1";
const LONG_NAME = "A quarterly business review with every regional director and their deputies";

const noFooter = (text: string) => expect(text).not.toMatch(/ of \d+: /);
const nonEmptyLines = (text: string) => text.split("\n").filter((l) => l.trim() !== "");

describe.each(MODES)("tables (%s)", (mode) => {
  const s = useInProcessSession(mode);
  beforeAll(async () => {
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

  it.each([60, 80, 100])(
    "at %i columns a code is never cut, one line a record, a footer on stderr",
    async (columns) => {
      await expectScenario(s, {
        name: `events list at ${columns} columns`,
        args: ["events", "list"],
        tty: true,
        columns,
        env: NO_COLOR,
        wantExit: 0,
        wantStdout: (stdout) => {
          const lines = nonEmptyLines(stdout);
          expect(lines[0]).toMatch(/^code +name/);
          expect(
            lines.find((l) => l.startsWith(LONG_CODE)),
            stdout,
          ).toBeDefined();
          expect(stdout).not.toMatch(/[│┌─]/);
          // the header and 20 events: no rule under each row
          expect(lines).toHaveLength(21);
          // columns that do not fit are left out rather than cut to 5 characters: every row fits (#47)
          for (const line of lines) expect(line.length).toBeLessThanOrEqual(columns);
        },
        wantStderr: "20 of 24: --page 2, or --all\n",
      });
    },
  );

  const TERMINAL: Scenario[] = [
    {
      name: "a user id is never cut at 60 columns",
      args: ["users", "list"],
      columns: 60,
      wantExit: 0,
      wantStdout: (stdout) => expect(stdout).toContain(s.userId),
    },
    {
      name: "resources say the next --start-index",
      args: ["resources", "list", "--type", "Room", "--count", "2"],
      wantExit: 0,
      wantStderr: "2 of 3: --start-index 3, or --all\n",
    },
    ...[
      ["the last page", ["events", "list", "--page", "2"]],
      // a progress bar instead
      ["--all", ["events", "list", "--all"]],
    ].map(([name, args]) => ({
      name: `no footer on ${name}`,
      args: args as string[],
      wantExit: 0,
      wantStdout: noFooter,
      wantStderr: noFooter,
    })),
  ];

  it.each(TERMINAL)("on a terminal: $name", async (scenario) => {
    await expectScenario(s, { ...scenario, tty: true, env: NO_COLOR });
  });

  // issue 32: a record's value wider than its column wraps onto the lines below; a word wider
  // than the column (a secret shown once, a URL) was cut short with "…"
  const CALLBACK = `https://printer.example.com/${"callback/".repeat(6)}ready`;
  /** The value of `key` in a record table: its row's text and the lines below that continue it. */
  const recordValue = (stdout: string, key: string) => {
    const lines = stdout.split("\n");
    const at = lines.findIndex((line) => line.startsWith(`${key} `));
    const rest = lines.slice(at + 1);
    const more = rest.slice(
      0,
      Math.max(
        0,
        rest.findIndex((line) => !line.startsWith(" ")),
      ),
    );
    return [lines[at] ?? "", ...more].map((line, i) => (i === 0 ? line.slice(key.length) : line).trim()).join("");
  };
  const RECORDS: Scenario[] = [40, 60].map((columns) => ({
    name: `oauth consumers create at ${columns} columns: the secret and the callback URL whole`,
    args: ["oauth", "consumers", "create", "--name", `Wrapped ${columns}`, "--callback", CALLBACK],
    columns,
    wantExit: 0,
    wantStdout: (stdout) => {
      expect(stdout).not.toContain("…");
      expect(recordValue(stdout, "consumerSecret")).toMatch(/^[0-9a-f]{64}$/);
      expect(recordValue(stdout, "callbackUrls")).toBe(CALLBACK);
      // at 40 the id (never cut) lets the rows out wider than the terminal
      if (columns >= 60) for (const line of stdout.trimEnd().split("\n")) expect(line.length).toBeLessThanOrEqual(60);
    },
  }));
  it.each(RECORDS)("on a terminal: $name", async (scenario) => {
    await expectScenario(s, { ...scenario, tty: true, env: NO_COLOR });
  });

  it("piped, a table is compact too, and a page cut from more says so on stderr only", async () => {
    const result = await s.run(["events", "list", "-o", "table"]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(result.stdout.trimEnd().split("\n")).toHaveLength(21);
    expect(result.stdout).toContain(LONG_CODE);
    expect(result.stderr).toBe("20 of 24: --page 2, or --all\n");
  });

  // issue 32: a piped list that gets the first page of many used to say nothing
  it.each<Scenario>([
    {
      name: "events: the page on stdout, the footer on stderr",
      args: ["events", "list"],
      wantExit: 0,
      wantStdout: (out) => expect(JSON.parse(out)).toHaveLength(20),
      wantStderr: "20 of 24: --page 2, or --all\n",
    },
    {
      name: "resources: the next --start-index",
      args: ["resources", "list", "--type", "Room", "--count", "2"],
      wantExit: 0,
      wantStdout: (out) => expect(JSON.parse(out)).toHaveLength(2),
      wantStderr: "2 of 3: --start-index 3, or --all\n",
    },
    { name: "-q: no footer", args: ["events", "list", "-q"], wantExit: 0, wantStderr: "" },
    { name: "the last page: no footer", args: ["events", "list", "--page", "2"], wantExit: 0, wantStderr: "" },
    { name: "--all: no footer", args: ["events", "list", "--all"], wantExit: 0, wantStderr: "" },
  ])("piped: $name", async (scenario) => {
    await expectScenario(s, scenario);
  });

  const EMPTY: [string, string[], string][] = [
    ["events", ["events", "list", "--filter", 'code eq "NONE"'], "No events.\n"],
    ["users", ["users", "list", "--filter", 'userName eq "nobody"'], "No users.\n"],
    ["resources", ["resources", "list", "--type", "Nothing"], "No resources.\n"],
  ];

  describe.each(EMPTY)("an empty list of %s", (_name, args, said) => {
    it.each<Scenario>([
      {
        name: "piped: [] and the message",
        args,
        wantExit: 0,
        wantStdout: (out) => expect(JSON.parse(out)).toEqual([]),
      },
      { name: "on a terminal: the message only", args, tty: true, env: NO_COLOR, wantExit: 0, wantStdout: "" },
    ])("$name", async (scenario) => {
      await expectScenario(s, { ...scenario, wantStderr: said });
    });

    it("-q: no message", async () => {
      await expectScenario(s, { name: "quiet", args: [...args, "-q"], wantExit: 0, wantStderr: "" });
    });
  });
});
