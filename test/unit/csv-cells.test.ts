/**
 * CSV formula injection: every CSV the CLI writes puts a `'` before a cell a spreadsheet would
 * run as a formula, and the CSV readers of `events import` and `users import` take exactly that
 * `'` off again, so that an export reads back as the same data.
 */
import { PassThrough, Readable } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { neutraliseCell, restoreCell } from "../../src/cli/csv-cells.js";
import type { IO } from "../../src/cli/io.js";
import { render } from "../../src/cli/output.js";
import { openRecordSource } from "../../src/cli/record-stream.js";
import { readUsers } from "../../src/cli/user-records.js";

const csvOf = (data: unknown, extra: { fields?: string[]; query?: string } = {}) =>
  render(data, { format: "csv", width: 100, color: false, ...extra });

const stdinOf = (text: string): IO => ({
  stdin: Readable.from([Buffer.from(text)]),
  stdout: new PassThrough(),
  stderr: new PassThrough(),
  env: {},
});

/** What a spreadsheet would run, each as the first character of a cell, and the text mark itself: written after a text mark ('). */
const MARKED: [string, string][] = [
  ["=", '=HYPERLINK("http://evil/")'],
  ["+", "+1+1"],
  ["-", "-5"],
  ["@", "@SUM(A1:A2)"],
  ["a tab", "\t=1+1"],
  ["a CR", "\r=1+1"],
  ["'", "'abc"],
  ["''", "''"],
  ["'=", "'=1"],
];
/** Cells written as they are. */
const UNCHANGED: [string, string][] = [
  ["a letter", "abc"],
  ["a digit", "2027-01-10T09:00:00Z"],
  ["a space", " =1"],
  ["nothing", ""],
  ["= later", "a=b-c"],
];
/** [what the cell starts with, its text, how it is written] */
const WRITTEN: [string, string, string][] = [
  ...MARKED.map(([what, text]): [string, string, string] => [what, text, `'${text}`]),
  ...UNCHANGED.map(([what, text]): [string, string, string] => [what, text, text]),
];

describe("neutraliseCell and restoreCell", () => {
  it.each(WRITTEN)("a cell starting with %s: %j is written %j, and read back", (_, text, written) => {
    expect(neutraliseCell(text)).toBe(written);
    expect(restoreCell(written)).toBe(text);
  });

  it.each([
    ["'", ""],
    ["'x", "x"],
    ["x'", "x'"],
  ])("a cell %j read from a file is %j", (cell, value) => {
    expect(restoreCell(cell)).toBe(value);
  });

  it("no written cell starts with a formula trigger, and every text reads back as itself", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.constantFrom("=", "+", "-", "@", "\t", "\r", "'").chain((c) => fc.string().map((s) => c + s)),
        ),
        (text) => {
          const written = neutraliseCell(text);
          expect(written).not.toMatch(/^[=+\-@\t\r]/);
          expect(restoreCell(written)).toBe(text);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("CSV output", () => {
  it.each([
    ["a string", "=1+1", "'=1+1"],
    ["a negative number", -5, "-5"],
    ["a number", 42, "42"],
    ["a boolean", true, "true"],
    ["null", null, ""],
    ["a list of text", ["-a", "b"], `"'-a, b"`],
    ["a list of numbers", [-1, 2], `"'-1, 2"`],
    ["an object", { "=k": "=v" }, '"{""=k"":""=v""}"'],
    ["a string with a quote", '=A1&"x"', `"'=A1&""x"""`],
  ])("%s is the cell %s", async (_, value, cell) => {
    expect(await csvOf([{ code: "E-1", value }])).toBe(`code,value\nE-1,${cell}\n`);
  });

  it("neutralises a header that a key could start (--query picks stored keys)", async () => {
    expect(await csvOf([{ "=evil": "x" }])).toBe("'=evil\nx\n");
  });

  it("neutralises the values of a --query result of values", async () => {
    expect(await csvOf([{ name: "@a" }, { name: "b" }], { query: "[].name" })).toBe("'@a\nb\n");
  });

  it("on a terminal, neutralises before showing control characters in their visible form", async () => {
    const text = await render([{ name: "\t=1" }], { format: "csv", width: 100, color: false, terminal: true });
    expect(text).toBe("name\n'^I=1\n");
  });
});

describe("the CSV readers undo it exactly", () => {
  const TEXTS = WRITTEN.map(([, text]) => text).filter((text) => text !== "");

  it.each(TEXTS)("events import reads %j back from events export -o csv", async (text) => {
    const csv = await csvOf([{ code: "E-1", name: text, version: 3 }], { fields: ["code", "name", "version"] });
    const source = await openRecordSource(stdinOf(csv), "-", "csv");
    const records = [];
    for await (const item of source.items) records.push(item.record);
    expect(records).toEqual([{ code: "E-1", name: text, version: "3" }]);
  });

  it.each(TEXTS)("users import reads %j back from users export -o csv", async (text) => {
    const csv = await csvOf([{ userName: "u1", displayName: text, title: "-5", active: false }], {
      fields: ["userName", "displayName", "title", "active"],
    });
    const lines = [];
    for await (const line of readUsers(stdinOf(csv), "-", { renames: new Map(), format: "csv" })) lines.push(line);
    expect(lines).toEqual([{ line: 2, user: { userName: "u1", displayName: text, title: "-5", active: false } }]);
  });

  /** Cells as a file holds them, and the values both readers make of them. */
  const READ: [string, string][] = [
    ["'=1+1", "=1+1"],
    ["'-5", "-5"],
    [`"'\t@x"`, "\t@x"],
    ["''abc", "'abc"],
    ["'''", "''"],
    ["abc", "abc"],
    ["a'b", "a'b"],
  ];

  it.each(READ)("events import reads the cell %j as %j", async (cell, value) => {
    const source = await openRecordSource(stdinOf(`code,location\nE-1,${cell}\n`), "-", "csv");
    for await (const item of source.items) expect(item.record).toEqual({ code: "E-1", location: value });
  });

  it.each(READ)("users import reads the cell %j as %j", async (cell, value) => {
    const lines = [];
    for await (const line of readUsers(stdinOf(`userName,title\nu1,${cell}\n`), "-", { renames: new Map() })) {
      lines.push(line);
    }
    expect(lines).toEqual([{ line: 2, user: { userName: "u1", title: value } }]);
  });

  it("reads a header written with a mark as the key it names", async () => {
    const source = await openRecordSource(stdinOf(await csvOf([{ "-k": "v" }])), "-", "csv");
    for await (const item of source.items) expect(item.record).toEqual({ "-k": "v" });
  });
});
