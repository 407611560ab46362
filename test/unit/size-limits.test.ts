/**
 * The size limits of issue #42, kept true: no source file over 450 lines, no test file over 900,
 * and a README under 450 lines, whose detail lives in docs/. A file past its limit fails by name.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

function filesUnder(dir: string, ends: RegExp): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && ends.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

const lineCount = (path: string) => readFileSync(path, "utf8").split("\n").length - 1;

/** The files of `files` longer than `max` lines, as `path: lines`. */
const over = (files: string[], max: number) =>
  files.filter((path) => lineCount(path) > max).map((path) => `${relative(ROOT, path)}: ${lineCount(path)}`);

describe("size limits", () => {
  it.each([
    { what: "a source file (src/)", files: () => filesUnder(join(ROOT, "src"), /\.ts$/), max: 450 },
    { what: "a test file (test/)", files: () => filesUnder(join(ROOT, "test"), /\.ts$/), max: 900 },
    { what: "the README", files: () => [join(ROOT, "README.md")], max: 449 },
  ])("$what is at most $max lines", ({ files, max }) => {
    const found = files();
    expect(found.length).toBeGreaterThan(0);
    expect(over(found, max)).toEqual([]);
  });
});
