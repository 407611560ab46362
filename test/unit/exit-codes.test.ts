/**
 * The exit codes as the README documents them are the CLI's: the table under "Exit codes" lists
 * every code of EXIT with its meaning (the words `help exit-codes` prints), and every problem
 * code of the contract exits with one of them.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BY_PROBLEM_CODE, EXIT, EXIT_MEANINGS, exitCodeFor } from "../../src/cli/errors.js";
import { ApiError } from "../../src/client/errors.js";
import { ERROR_CODES, ERROR_STATUS } from "../../src/contract/errors.js";

const README = readFileSync(join(import.meta.dirname, "..", "..", "README.md"), "utf8");

/** The rows of the README's exit-code table: [code, meaning]. */
function readmeTable(): [number, string][] {
  const section = README.split(/^## Exit codes$/m)[1]?.split(/^## /m)[0] ?? "";
  return [...section.matchAll(/^\| (\d+) \| (.+?) \|$/gm)].map((m) => [Number(m[1]), m[2]!]);
}

const problem = (code: string, status: number) =>
  new ApiError(status, { type: "about:blank", title: code, status, detail: code, code });

describe("exit codes", () => {
  it("the README's table lists every exit code with the meaning the CLI gives it", () => {
    const cli = Object.entries(EXIT).map(([name, code]) => [code, EXIT_MEANINGS[name as keyof typeof EXIT]]);
    expect(readmeTable()).toEqual(cli);
  });

  it("every problem code of the contract exits with a code of the README's table", () => {
    const documented = new Set(readmeTable().map(([code]) => code));
    for (const code of ERROR_CODES) {
      expect(Object.hasOwn(BY_PROBLEM_CODE, code), code).toBe(true);
      const exit = exitCodeFor(problem(code, ERROR_STATUS[code]));
      expect(documented.has(exit), `${code} exits ${exit}`).toBe(true);
    }
  });

  it.each([
    { name: "a code this CLI does not know exits 1", code: "newer_code", status: 400, exit: EXIT.failure },
    { name: "one with a 5xx status exits 8", code: "newer_code", status: 502, exit: EXIT.unavailable },
    { name: "a name of Object's prototype is no code", code: "constructor", status: 400, exit: EXIT.failure },
    { name: "forbidden exits 5", code: "forbidden", status: 403, exit: EXIT.forbidden },
  ])("$name", ({ code, status, exit }) => {
    expect(exitCodeFor(problem(code, status))).toBe(exit);
  });
});
