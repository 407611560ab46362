/**
 * The escape test: a member stores names holding ESC, BEL, CSI, OSC and C1 characters. On a
 * terminal (a real pseudo-terminal) none of those bytes reach the screen, in tables, JSON,
 * YAML, error lines and prompts; piped, the data comes back exactly as stored.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { bizctl, type CliResult, errorOf, json, MODES, makeSandbox, show, useSession } from "../helpers/cli.js";
import { inTerminal, type PtyResult } from "../helpers/pty.js";

/** ESC of a CSI that clears the screen, BEL, a CSI that recolours, an OSC that sets the title, C1 CSI, C1 OSC … ST */
const HOSTILE = "Evil \u001b[2J\u0007\u001b[31m\u001b]0;pwned\u0007\u009b31m\u009d0;x\u009c";
/** the same, as a terminal shows it */
const SHOWN = "Evil ^[[2J^G^[[31m^[]0;pwned^G<U+009B>31m<U+009D>0;x<U+009C>";

/** What the escape test forbids on a terminal: any C0 but the line endings, DEL, C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
/** BEL, C1, ESC opening an OSC/DCS/PM/APC, and the data's clear-screen CSI: what no own sequence of ours holds */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const FROM_DATA = /[\u0007\u0080-\u009f]|\u001b[\]P^_X]|\u001b\[2J/;
/** bold on and off: the only sequences a table of ours writes when colours are on */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the program's own styling
const BOLD = /\u001b\[(1|22)m/g;

const NO_COLOR = { NO_COLOR: "1" };

/** The terminal's raw text with its \r\n turned back into \n. */
const text = (result: PtyResult) => result.raw.replace(/\r\n/g, "\n");

function expectCleanRun(result: PtyResult, exitCode = 0): void {
  expect(result.error, result.raw).toBeUndefined();
  expect(result.exitCode, result.raw).toBe(exitCode);
}

describe.each(MODES)("terminal safety (%s)", (mode) => {
  const s = useSession(mode);
  let roomId: string;

  beforeAll(async () => {
    const event = { code: "EVIL-1", name: HOSTILE, startsAt: "2027-01-10T09:00:00Z", location: HOSTILE };
    const created = await s.run(["events", "create", "--file", "-"], { input: JSON.stringify(event) });
    expect(created.exitCode, show(created)).toBe(0);
    const room = await s.run(["resources", "create", "--type", "Room", "--set", `displayName=${HOSTILE}`]);
    expect(room.exitCode, show(room)).toBe(0);
    roomId = json(room).id;
    const user = await s.run([
      "users",
      "create",
      "--user-name",
      "mallory",
      "--no-password",
      "--set",
      `displayName=${HOSTILE}`,
    ]);
    expect(user.exitCode, show(user)).toBe(0);
  });

  describe("piped, the data is exact", () => {
    it("events get --json returns the name exactly as stored", async () => {
      const result = await s.run(["events", "get", "EVIL-1", "--json"]);
      expect(result.exitCode, show(result)).toBe(0);
      expect(json(result).name).toBe(HOSTILE);
      // JSON.stringify's bytes: C0 in its own escapes, C1 raw
      expect(result.stdout).toContain('"name": "Evil \\u001b[2J\\u0007\\u001b[31m\\u001b]0;pwned\\u0007\u009b31m');
    });

    it("list, ndjson, yaml and csv keep the C1 characters raw, and read back exactly", async () => {
      const list = await s.run(["events", "list", "--json"]);
      expect(json(list).map((e: { name: string }) => e.name)).toEqual([HOSTILE]);
      const ndjson = await s.run(["events", "list", "-o", "ndjson"]);
      expect(JSON.parse(ndjson.stdout).name).toBe(HOSTILE);
      const yaml = await s.run(["events", "get", "EVIL-1", "-o", "yaml"]);
      expect(parseYaml(yaml.stdout).name).toBe(HOSTILE);
      expect(yaml.stdout).toContain("\u009b31m\u009d0;x\u009c");
      const csv = await s.run(["events", "list", "-o", "csv", "--fields", "code,name"]);
      expect(csv.stdout).toBe(`code,name\nEVIL-1,${HOSTILE}\n`);
      const users = await s.run(["resources", "get", roomId, "--json"]);
      expect(json(users).displayName).toBe(HOSTILE);
    });

    it("a JSON error quoting stored data is the same data, with C1 escaped", async () => {
      const result: CliResult = await s.run(["events", "delete", "EVIL-1", "--no-input"]);
      expect(result.exitCode, show(result)).toBe(2);
      expect(errorOf(result).message).toContain(HOSTILE);
      expect(result.stderr).not.toMatch(RAW_CONTROL);
    });
  });

  describe("on a terminal, none of those bytes reach the screen", () => {
    it("events get: a table that shows them in a visible form", async () => {
      const result = await inTerminal({ ...s.env, ...NO_COLOR }, ["events", "get", "EVIL-1"]);
      expectCleanRun(result);
      expect(result.raw).not.toMatch(RAW_CONTROL);
      expect(result.raw).not.toContain("\u001b");
      expect(text(result)).toMatch(new RegExp(`name +${escapeRegExp(SHOWN)}\r?\n`));
      expect(text(result)).toMatch(new RegExp(`location +${escapeRegExp(SHOWN)}\r?\n`));
    });

    it("events list: a table, with colours on, writes no byte but its own bold", async () => {
      const result = await inTerminal(s.env, ["events", "list", "--fields", "code,name"]);
      expectCleanRun(result);
      expect(result.raw).toMatch(BOLD);
      expect(result.raw.replace(BOLD, "")).not.toMatch(RAW_CONTROL);
      expect(text(result)).toMatch(new RegExp(`EVIL-1 +${escapeRegExp(SHOWN)}`));
    });

    it("users list and resources get show a display name in the visible form", async () => {
      for (const args of [
        // the id column is never cut, so at 100 columns the others give way: name the two to see
        ["users", "list", "--fields", "userName,displayName"],
        ["resources", "get", roomId],
      ]) {
        const result = await inTerminal({ ...s.env, ...NO_COLOR }, args);
        expectCleanRun(result);
        expect(result.raw).not.toMatch(RAW_CONTROL);
        expect(result.raw).not.toContain("\u001b");
        expect(text(result)).toContain("Evil ^[[2J^G");
      }
    });

    it.each([
      ["json", (t: string) => JSON.parse(t)],
      ["yaml", (t: string) => parseYaml(t)],
    ] as const)("-o %s escapes them, and reads back as exactly the stored name", async (format, parse) => {
      const result = await inTerminal(s.env, ["events", "get", "EVIL-1", "-o", format]);
      expectCleanRun(result);
      expect(result.raw).not.toMatch(RAW_CONTROL);
      expect(result.raw).not.toContain("\u001b");
      expect(parse(text(result)).name).toBe(HOSTILE);
      expect(result.raw).toContain("\\u009b31m\\u009d0;x\\u009c");
    });

    it("-o csv, which has no escapes, shows the visible form", async () => {
      const result = await inTerminal(s.env, ["events", "list", "-o", "csv", "--fields", "code,name"]);
      expectCleanRun(result);
      expect(result.raw).not.toMatch(RAW_CONTROL);
      expect(text(result)).toBe(`code,name\nEVIL-1,${SHOWN}\n`);
    });

    it("an error line quoting stored data shows it in the visible form, on one line", async () => {
      const result = await inTerminal({ ...s.env, ...NO_COLOR }, ["events", "delete", "EVIL-1", "--no-input"]);
      expectCleanRun(result, 2);
      expect(result.raw).not.toMatch(RAW_CONTROL);
      expect(result.raw).not.toContain("\u001b");
      expect(text(result)).toBe(
        `error: Delete event EVIL-1 (${SHOWN})? Refusing without a terminal. — pass --yes to confirm\n`,
      );
    });

    it("an error line quoting what was typed shows it in the visible form", async () => {
      const result = await inTerminal(s.env, ["resources", "get", "X\u001b[2J\u0007\u009b31m"]);
      expectCleanRun(result, 3);
      expect(result.raw).not.toMatch(RAW_CONTROL);
      expect(text(result)).toContain("X^[[2J^G<U+009B>31m");
    });

    it("a confirmation prompt quoting a name shows it in the visible form; no keeps the event", async () => {
      const result = await inTerminal(s.env, ["events", "delete", "EVIL-1"], [{ expect: "(y/N)", send: "n" }]);
      expectCleanRun(result, 2);
      expect(result.raw).not.toMatch(FROM_DATA);
      expect(result.output).toContain("Delete event EVIL-1 (Evil ^[[2J^G^[[31m^[]0;pwned^G<U+009B>31m");
      expect((await s.run(["events", "get", "EVIL-1"])).exitCode).toBe(0);
    });

    it("the same for a custom resource's display name", async () => {
      const result = await inTerminal(s.env, ["resources", "delete", roomId], [{ expect: "(y/N)", send: "n" }]);
      expectCleanRun(result, 2);
      expect(result.raw).not.toMatch(FROM_DATA);
      expect(result.output).toContain(`Delete Room Evil ^[[2J^G`);
    });
  });
});

describe.each(MODES)("a userName is an identifier: no control characters (%s)", (mode) => {
  const s = useSession(mode);

  it("users create refuses one with exit 7, and creates nothing", async () => {
    const result = await s.run(["users", "create", "--user-name", "mal\u001b[2Jlory", "--no-password"]);
    expect(result.exitCode, show(result)).toBe(7);
    expect(errorOf(result)).toMatchObject({ code: "validation_failed", message: expect.stringContaining("control") });
    const list = await s.run(["users", "list", "--json"]);
    expect(json(list).map((u: { userName: string }) => u.userName)).toEqual(["admin"]);
  });

  it.runIf(mode === "embedded")("server init refuses one with exit 7, and a later init still works", async () => {
    const sandbox = await makeSandbox();
    try {
      const refused = await bizctl(["server", "init", "--admin-user", "root\u0007"], { env: sandbox.env });
      expect(refused.exitCode, show(refused)).toBe(7);
      const init = await bizctl(["server", "init", "--admin-user", "root"], { env: sandbox.env });
      expect(init.exitCode, show(init)).toBe(0);
    } finally {
      await sandbox.remove();
    }
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
