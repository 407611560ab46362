/**
 * A day at the terminal (issue 47, the awkward items), in a real pseudo-terminal of 80 and 200
 * columns, against the embedded and a remote server: what a verb that writes a user prints,
 * `audit tail -f`'s one header, the import progress bar's end, and bulk verbs fed by stdin.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { json, MODES, show, useSession } from "../helpers/cli.js";
import { inTerminal, type PtyResult } from "../helpers/pty.js";

const WIDTHS = [80, 200];

const clean = (result: PtyResult) => {
  expect(result.error, result.raw).toBeUndefined();
  expect(result.exitCode, result.raw).toBe(0);
  return result.output;
};

describe.each(MODES)("a day at the terminal (%s)", (mode) => {
  const s = useSession(mode);
  const term = (columns: number, args: string[], script: Parameters<typeof inTerminal>[2] = []) =>
    inTerminal({ ...s.env, PTY_COLUMNS: String(columns), NO_COLOR: "1" }, args, script);

  describe.each(WIDTHS)("at %i columns", (columns) => {
    const name = `terminal-${columns}`;

    // issue 47 item 8: the summary `users get` prints, not the record's raw fields
    it.each([
      ["users create", (user: string) => ["users", "create", "--user-name", user, "--no-password"]],
      ["users update", (user: string) => ["users", "update", user, "--set", "title=Night shift"]],
      ["users disable", (user: string) => ["users", "disable", user]],
      ["users enable", (user: string) => ["users", "enable", user]],
    ])("%s prints the user's summary", async (_verb, args) => {
      const output = clean(await term(columns, args(name)));
      expect(output).toMatch(new RegExp(`userName +${name}`));
      expect(output).toMatch(/created +\d{4}-/);
      for (const raw of ["urn:ietf:params:scim", '{"resourceType"', "schemas"]) expect(output).not.toContain(raw);
      // a data format keeps the record as the API answers it
      const piped = await s.run([...args(`${name}-json`), "--json"]);
      expect(piped.exitCode, show(piped)).toBe(0);
      expect(json(piped)).toHaveProperty("meta.created");
      expect(json(piped)).toHaveProperty("schemas");
    });

    // issue 47 item 11: one header, however many polls find records
    it("audit tail --follow prints its header once", async () => {
      const filter = 'action eq "event.create"';
      let tailing = true;
      const tail = term(
        columns,
        ["audit", "tail", "-f", "-n", "0", "--filter", filter],
        [
          { expect: "event.create" },
          { expect: "event.create" },
          { expect: "event.create", send: "\u0003", enter: false },
          { expect: "Resume with" },
        ],
      ).finally(() => {
        tailing = false;
      });
      // one event at a time, each found by a poll of its own, until the tail has seen three
      for (let i = 0; tailing && i < 20; i++) {
        const created = await s.run([
          "events",
          "create",
          ...["--set", `code=TAIL-${columns}-${i}`, "--set", "name=Tail", "--set", "startsAt=2027-06-01T09:00:00Z"],
        ]);
        expect(created.exitCode, show(created)).toBe(0);
      }
      const output = (await tail).output;
      expect(output.match(/^time +action/gm), output).toHaveLength(1);
    });

    // issue 47 item 13: the bar reaches its end
    it("events import's progress bar reaches its total", async () => {
      // larger than a read's 64 KiB and one request's batch: the first record draws the bar at a
      // quarter of the file, and the rest is read within the redraw interval
      const count = 600;
      const file = join(s.sandbox.root, `progress-${columns}.json`);
      const events = Array.from({ length: count }, (_, i) => ({
        code: `P${columns}-${i}`,
        name: `An event of the progress test, number ${i}`,
        startsAt: "2027-05-01T09:00:00Z",
        location: "The large room on the fourth floor, north building",
        description: "An agenda long enough that the file is several reads. ".repeat(5),
      }));
      await writeFile(file, JSON.stringify(events));
      const output = clean(await term(columns, ["events", "import", file]));
      const drawn = output.split(/\r/).filter((line) => line.includes(" events"));
      expect(drawn.at(-1), output).toContain(`[${"#".repeat(30)}] ${count} events`);
    });
  });

  // issue 47 item 14: enable --filter undoes disable --filter; bulk verbs read names from stdin
  describe("bulk verbs", () => {
    const filter = 'title eq "Bulk fourteen"';
    const ok = async (args: string[], input?: string) => {
      const result = await s.run(args, { input });
      expect(result.exitCode, show(result)).toBe(0);
      return result;
    };

    it("users enable --filter: dry run, refusals, confirmation, then every user selected", async () => {
      for (const user of ["bulk-a", "bulk-b"]) {
        await ok(["users", "create", "--user-name", user, "--no-password", "--set", "title=Bulk fourteen"]);
      }
      await ok(["users", "disable", "--filter", filter, "--yes"]);
      const dry = json(await ok(["users", "enable", "--filter", filter, "--dry-run"]));
      expect(dry).toMatchObject({ dryRun: true, matched: 2 });
      const empty = await s.run(["users", "enable", "--filter", " ", "--yes"]);
      expect(empty.exitCode, show(empty)).toBe(2);
      const unasked = await s.run(["users", "enable", "--filter", filter]);
      expect(unasked.exitCode, show(unasked)).toBe(2);
      expect(unasked.stderr).toContain("--yes");
      for (const user of ["bulk-a", "bulk-b"]) {
        expect(json(await ok(["users", "get", user, "--json"])).active).toBe(false);
      }
      const asked = await term(
        200,
        ["users", "enable", "--filter", filter],
        [{ expect: "Enable 2 user(s)", send: "y" }, { expect: "Enabled 2 of 2" }],
      );
      clean(asked);
      for (const user of ["bulk-a", "bulk-b"]) {
        expect(json(await ok(["users", "get", user, "--json"])).active).toBe(true);
      }
    });

    it.each([
      ["users disable -", ["users", "disable", "-"], false],
      ["users enable -", ["users", "enable", "-"], true],
    ])("%s acts on every user stdin names", async (_name, args, active) => {
      const users = json(await ok([...args, "--yes", "--json"], " bulk-a\n\nbulk-b\n"));
      expect(users.map((u: { userName: string }) => u.userName)).toEqual(["bulk-a", "bulk-b"]);
      expect(users.every((u: { active: boolean }) => u.active === active)).toBe(true);
    });

    it("users delete - and events delete - delete what stdin names; an empty stdin is nothing to do", async () => {
      const nothing = await ok(["users", "delete", "-", "--yes"], "");
      expect(nothing.stderr).toContain("nothing to do");
      const unasked = await s.run(["users", "delete", "-"], { input: "bulk-a\n" });
      expect(unasked.exitCode, show(unasked)).toBe(2);
      await ok(["users", "delete", "-", "--yes"], "bulk-a\nbulk-b\n");
      for (const user of ["bulk-a", "bulk-b"]) {
        expect((await s.run(["users", "get", user])).exitCode).not.toBe(0);
      }
      for (const code of ["BULK-1", "BULK-2"]) {
        await ok([
          "events",
          "create",
          "--set",
          `code=${code}`,
          "--set",
          "name=Bulk",
          "--set",
          "startsAt=2027-06-01T09:00:00Z",
        ]);
      }
      await ok(["events", "delete", "-", "--yes"], "BULK-1\nBULK-2\n");
      for (const code of ["BULK-1", "BULK-2"]) expect((await s.run(["events", "get", code])).exitCode).not.toBe(0);
    });
  });
});
