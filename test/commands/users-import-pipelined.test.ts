/**
 * `users import` keeps a second batch in flight while the first is answered (#33). Small batches
 * make many of them: failures are still told by line in the file's order, and a userName or an
 * externalId met again in the next batch, or further on, is still handled as one batch at a time
 * handled it, under each --on-conflict policy: the earlier line comes first.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CliResult, json, show } from "../helpers/cli.js";
import { IMPORT_STORES, useImportSession } from "../helpers/events-import.js";

type Failure = { line: number; userName?: string; problem: string };
type Summary = { read: number; created: number; updated: number; skipped: number; failed: number; failures: Failure[] };

describe.each(IMPORT_STORES)("users import, batches in flight (%s)", (store) => {
  const s = useImportSession(store);

  async function importCsv(name: string, lines: string[], args: string[]): Promise<CliResult> {
    const file = join(s.sandbox.root, name);
    await writeFile(file, `userName,title,externalId\n${lines.join("\n")}\n`);
    return s.run(["users", "import", file, "--json", "--batch-size", "2", ...args]);
  }

  async function titleOf(userName: string): Promise<string | undefined> {
    const found = await s.run(["users", "list", "--filter", `userName eq "${userName}"`, "--json"]);
    expect(found.exitCode, show(found)).toBe(0);
    return json<{ title?: string }[]>(found)[0]?.title;
  }

  // Lines 2 to 13, two to a batch, `t` the scenario's tag. Line 3's user exists before the
  // import. Line 4 names line 2's user again in the next batch (in flight beside it), line 6 line
  // 5's, line 12 line 8's two batches on; line 10 reuses line 8's externalId in the next batch;
  // line 9 has no userName.
  const lines = (t: string) => [
    `${t}-a,A1,`,
    `${t}-old,Old2,`,
    `${t.toUpperCase()}-A,A2,`,
    `${t}-b,B1,`,
    `${t}-B,B2,`,
    `${t}-c,C1,`,
    `${t}-d,D1,${t}-x`,
    `,None,`,
    `${t}-e,E1,${t}-x`,
    `${t}-f,F1,`,
    `${t}-d,D2,`,
    `${t}-g,G1,`,
  ];
  const SCENARIOS = [
    {
      policy: "fail",
      exit: 1,
      counts: { created: 6, updated: 0, skipped: 0, failed: 6 },
      failures: [3, 4, 6, 9, 10, 12],
      titles: { a: "A1", old: "Before", b: "B1", d: "D1" },
    },
    {
      // line 10 conflicts by externalId alone: it fails whatever the policy (skip counted it as
      // skipped, a user of a new userName silently not created)
      policy: "skip",
      exit: 1,
      counts: { created: 6, updated: 0, skipped: 4, failed: 2 },
      failures: [9, 10],
      titles: { a: "A1", old: "Before", b: "B1", d: "D1" },
    },
    {
      policy: "update",
      exit: 1,
      counts: { created: 6, updated: 4, skipped: 0, failed: 2 },
      failures: [9, 10],
      titles: { a: "A2", old: "Old2", b: "B2", d: "D2" },
    },
  ];

  it.each(SCENARIOS)("--on-conflict $policy: $counts", async ({ policy, exit, counts, failures, titles }) => {
    const t = `p${policy}`;
    const before = await importCsv(`${t}-before.csv`, [`${t}-old,Before,`], []);
    expect(before.exitCode, show(before)).toBe(0);
    const result = await importCsv(`${t}.csv`, lines(t), ["--on-conflict", policy]);
    expect(result.exitCode, show(result)).toBe(exit);
    const summary = json<Summary>(result);
    expect(summary).toMatchObject({ read: 12, ...counts });
    expect(summary.failures.map((f) => f.line)).toEqual(failures);
    for (const [key, title] of Object.entries(titles)) expect(await titleOf(`${t}-${key}`), key).toBe(title);
    expect(await titleOf(`${t}-g`)).toBe("G1");
    expect(await titleOf(`${t}-e`)).toBeUndefined();
  });
});
