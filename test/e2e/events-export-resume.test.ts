import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { BIN, ROOT, show } from "../helpers/cli.js";
import { event, IMPORT_STORES, importFiles, ndjson, useImportSession } from "../helpers/events-import.js";

/**
 * `events export` and `events list --all`, the built binary, interrupted with SIGINT once their
 * first page is out: they stop between two pages with exit 130 and name on stderr the command that
 * goes on after the last page printed; that command, run, prints the rest, so that the two outputs
 * together are the whole list, without a duplicate or a gap.
 */
const scenarios = [
  { verb: ["events", "export"], args: [] as string[] },
  { verb: ["events", "list", "--all"], args: ["--order", "-name"] },
];

describe.each(IMPORT_STORES)("an interrupted list resumes where it stopped (%s)", (store) => {
  const s = useImportSession(store);
  const { file, importFile } = importFiles(s);
  const total = 4000;

  it.each(scenarios)(
    "$verb $args",
    async ({ verb, args }) => {
      const prefix = verb.join("").slice(0, 12).toUpperCase();
      if (!(await s.run(["events", "get", `${prefix}-00000`, "--json"])).stdout.includes(prefix)) {
        const lines = Array.from({ length: total }, (_, i) => event(`${prefix}-${String(i).padStart(5, "0")}`));
        expect((await importFile(file(`${prefix}.ndjson`, ndjson(...lines)))).exitCode).toBe(0);
      }
      const command = [...verb, ...args, "-o", "ndjson", "--filter", `code sw "${prefix}"`];
      const whole = await s.run(command);
      expect(whole.exitCode, show(whole)).toBe(0);

      const child = spawn("node", [BIN, ...command], { cwd: ROOT, env: s.env, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
      });
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        if (stdout === "") child.kill("SIGINT");
        stdout += chunk;
      });
      const [code] = await once(child, "close");
      expect(code, stderr).toBe(130);
      // stderr is no terminal: the error is a JSON document, its hint the command
      const { hint } = (JSON.parse(stderr.trim().split("\n").at(-1)!) as { error: { hint: string } }).error;
      const resume = /^resume with: (bizctl .* --after \S+)$/.exec(hint)?.[1];
      expect(resume, stderr).toBeDefined();
      // the command as printed, words split as a shell would (the filter is quoted)
      const words = [...resume!.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map(
        (m) => m[1]?.replace(/'\\''/g, "'") ?? m[2]!,
      );
      expect(words[0]).toBe("bizctl");
      const rest = await s.run(words.slice(1));
      expect(rest.exitCode, show(rest)).toBe(0);

      const first = stdout.split("\n").filter(Boolean);
      expect(first.length).toBeGreaterThan(0);
      expect(first.length).toBeLessThan(total);
      expect([...first, ...rest.stdout.split("\n").filter(Boolean)]).toEqual(whole.stdout.split("\n").filter(Boolean));
    },
    120_000,
  );
});
