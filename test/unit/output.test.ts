/**
 * The renderers with hostile data: on a terminal nothing a terminal acts on is printed; piped,
 * every data format is exact.
 */

import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { displayWidth, type Format, isIdentifier, render } from "../../src/cli/output.js";

/** ESC (a CSI that clears the screen), BEL, a CSI that recolours, an OSC that sets the title, C1 CSI/OSC/ST, DEL, RLO */
const HOSTILE = "Evil \u001b[2J \u0007 \u001b[31mred \u001b]0;pwned\u0007 \u009b31m \u009d0;x\u009c \u007f \u202eabc";
const EVENT = { code: "EVIL-1", name: HOSTILE, startsAt: "2027-01-10T09:00:00Z", customFields: { "k\u009b": HOSTILE } };

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const options = (format: Format, terminal: boolean) => ({ format, terminal, width: 100, color: false });

describe("render on a terminal", () => {
  it.each([
    ["json", (t: string) => JSON.parse(t)],
    ["yaml", (t: string) => parseYaml(t)],
  ] as const)("%s escapes the control characters and reads back as the same data", async (format, parse) => {
    for (const data of [EVENT, [EVENT, EVENT]]) {
      const text = await render(data, options(format, true));
      expect(text).not.toMatch(RAW_CONTROL);
      expect(parse(text)).toEqual(data);
    }
  });

  it("ndjson escapes them and each line reads back as the record", async () => {
    const text = await render([EVENT, EVENT], options("ndjson", true));
    expect(text).not.toMatch(RAW_CONTROL);
    expect(
      text
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line)),
    ).toEqual([EVENT, EVENT]);
  });

  it("csv, which has no escapes, shows their visible form", async () => {
    const text = await render([EVENT], { ...options("csv", true), fields: ["code", "name"] });
    expect(text).not.toMatch(RAW_CONTROL);
    expect(text).toContain("Evil ^[[2J ^G ^[[31mred ^[]0;pwned^G <U+009B>31m <U+009D>0;x<U+009C> ^? <U+202E>abc");
  });

  it("yaml writes C0 with its own escapes and C1 as \\u escapes", async () => {
    const text = await render(EVENT, options("yaml", true));
    expect(text).toContain("\\u009b31m");
    expect(text).toContain("\\e[2J");
  });
});

describe("render piped", () => {
  it("json and ndjson are exactly JSON.stringify (which escapes C0 itself, and nothing else)", async () => {
    expect(await render(EVENT, options("json", false))).toBe(`${JSON.stringify(EVENT, null, 2)}\n`);
    expect(await render([EVENT, EVENT], options("ndjson", false))).toBe(`${JSON.stringify(EVENT)}\n`.repeat(2));
    expect(await render(EVENT, options("json", false))).toContain("\u009b31m \u009d0;x\u009c \u007f \u202eabc");
    expect(JSON.parse(await render([EVENT], options("json", false)))).toEqual([EVENT]);
  });

  it("csv keeps the characters exactly as stored", async () => {
    expect(await render([EVENT], { ...options("csv", false), fields: ["code", "name"] })).toBe(
      `code,name\nEVIL-1,${HOSTILE}\n`,
    );
  });

  it("yaml reads back as the same data", async () => {
    expect(parseYaml(await render([EVENT], options("yaml", false)))).toEqual([EVENT]);
  });
});

describe("tables, piped or not, are for people", () => {
  it.each([true, false])("show the visible forms in a list and in one record (terminal: %s)", async (terminal) => {
    for (const data of [[EVENT, { ...EVENT, code: "EVIL-2" }], EVENT]) {
      const text = await render(data, { ...options("table", terminal), width: 400 });
      expect(text).not.toMatch(RAW_CONTROL);
      expect(text).toContain("Evil ^[[2J ^G ^[[31mred ^[]0;pwned^G <U+009B>31m <U+009D>0;x<U+009C> ^? <U+202E>abc");
    }
  });

  it("keep one line per record in a list: a newline in a value is shown", async () => {
    const text = await render([{ code: "A", name: "one\ntwo" }], options("table", true));
    expect(text).toContain("one^Jtwo");
    expect(text.trim().split("\n")).toHaveLength(2);
  });

  it("lay out a multi-line value of one record on several lines, and show a CR", async () => {
    const text = await render({ code: "A", description: "one\r\ntwo\rthree" }, options("table", true));
    expect(text).toMatch(/^description {2}one\n {13}two\^Mthree$/m);
  });

  it("show control characters in field names (custom attributes, --fields) too", async () => {
    const text = await render([{ "a\u001b[2J": 1 }], { ...options("table", true), fields: ["a\u001b[2J"] });
    expect(text).toContain("a^[[2J");
    expect(text).not.toMatch(RAW_CONTROL);
  });
});

describe("compact tables that keep identifiers whole", () => {
  const ID = "75da28cd-050f-473f-9351-bb6f6a544338";
  const ROWS = [
    { id: ID, userName: "a-rather-long-user-name", displayName: "A display name that is far too long to fit" },
    { id: "u2", userName: "b", displayName: "B" },
  ];

  it.each([40, 60, 80, 120])("at %i columns the id is never cut, the other columns give way", async (width) => {
    const text = await render(ROWS, { format: "table", width, color: false });
    expect(text).toContain(ID);
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    // the others shrink (to 5 at least) before the row is let out wider than the terminal; the
    // user name is an identifier too (users get USER takes it)
    const whole = ID.length + ROWS[0]!.userName.length;
    if (width >= whole + 5 + 2 * 2) for (const line of lines) expect(line.length).toBeLessThanOrEqual(width);
  });

  it("a code column is kept whole too, and a name column gives way with an ellipsis", async () => {
    const code = "A-VERY-LONG-EVENT-CODE-2027-01";
    const text = await render([{ code, name: "x".repeat(80) }], { format: "table", width: 50, color: false });
    expect(text).toContain(code);
    expect(text).toContain("…");
  });

  it.each([undefined, 0])("a width of %s (unknown, or a terminal that cannot tell) cuts nothing", async (width) => {
    const text = await render(ROWS, { format: "table", width, color: false });
    expect(text).not.toContain("…");
    expect(text).toContain(ROWS[0]!.displayName);
    const record = await render(ROWS[0], { format: "table", width, color: false });
    expect(record).toContain(ROWS[0]!.displayName);
  });

  it.each([
    ["token", "token", true],
    ["consumerKey", "consumerKey", true],
    ["an audit record's time", "time", true],
    ["an audit record's action", "action", true],
    ["a nested id", "actor.id", true],
    ["a user name, which users get takes", "userName", true],
    ["an e-mail, which users get takes", "emails.value", true],
    ["a display name", "displayName", false],
    ["a timestamp of a record", "createdAt", false],
  ])("%s: identifier %s is %s", (_what, column, identifier) => {
    expect(isIdentifier(column)).toBe(identifier);
  });

  it("measures a coloured header and wide characters by the columns they take", async () => {
    expect(displayWidth("\u001b[1mtime\u001b[22m")).toBe(4);
    expect(displayWidth("会議室")).toBe(6);
    expect(displayWidth("e\u0301")).toBe(1);
    const rows = [{ time: "2026-01-01T00:00:00.000Z", name: "会議室 北棟 四階の大きな部屋" }];
    const text = await render(rows, { format: "table", width: 200, color: true });
    // the header's bold takes no width: the name column is as wide as the name, nothing cut
    expect(text).not.toContain("…");
    expect(text).toContain(rows[0]!.name);
  });

  it("a record's id is never cut however narrow the terminal", async () => {
    const text = await render(ROWS[0], { format: "table", width: 30, color: false });
    expect(text).toContain(ID);
  });

  it("has no borders and no rule under each row: a header and one line a record", async () => {
    const rows = Array.from({ length: 20 }, (_, i) => ({ code: `E${i}`, name: `Event ${i}` }));
    const text = await render(rows, { format: "table", width: 80, color: false });
    expect(text.trimEnd().split("\n")).toHaveLength(21);
    expect(text).not.toMatch(/[│┌─┼└]/);
    expect(text.split("\n")[0]).toBe("code  name");
  });
});
