import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, json, ROOT, show } from "../helpers/cli.js";
import { event, IMPORT_STORES, importSession, ndjson } from "../helpers/events-import.js";
import type { InProcessSession } from "../helpers/in-process.js";

/**
 * An `events import` process killed with SIGKILL half-way leaves whole batches behind, and the
 * same import run again with `--on-conflict skip` ends with exactly the file, on each store. The
 * import that is killed is the binary; the set-up, the counts and the run again are commands in
 * this process (test/commands/events-bulk-import.test.ts has the rest of the import's behaviour).
 */

describe.each(IMPORT_STORES)("events import killed half-way (%s)", (store) => {
  let s: InProcessSession;
  beforeAll(async () => {
    s = await importSession(store);
  }, 60_000);
  afterAll(async () => s?.close());

  const file = (name: string, content: string) => {
    const path = join(s.sandbox.root, name);
    writeFileSync(path, content);
    return path;
  };
  const importFile = (path: string, ...args: string[]) => s.run(["events", "import", path, "--json", ...args]);

  it("an import killed half-way, run again with --on-conflict skip, ends with exactly the file", async () => {
    const total = 3000;
    const lines = Array.from({ length: total }, (_, i) => event(`KILL-${String(i).padStart(5, "0")}`, `Kill ${i}`));
    const path = file("kill.ndjson", ndjson(...lines));
    const killed = spawn("node", [BIN, "events", "import", path, "--batch-size", "10", "-q"], {
      cwd: ROOT,
      env: s.env,
      stdio: "ignore",
    });
    const exited = new Promise<number | null>((done) => killed.once("exit", (code) => done(code)));
    // half-way: once some batches are in and before the last
    let exitedEarly = false;
    void exited.then(() => {
      exitedEarly = true;
    });
    const filter = encodeURIComponent('code sw "KILL-"');
    for (let stored = 0; stored === 0 && !exitedEarly; ) {
      const count = await s.run(["api", "GET", `/api/crm/v1/events?pagesize=1&filter=${filter}`]);
      stored = json<{ total: number }>(count).total;
    }
    killed.kill("SIGKILL");
    await exited;
    const partial = await exportedKills();
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(total);

    const again = await importFile(path, "--on-conflict", "skip");
    expect(again.exitCode, show(again)).toBe(0);
    expect(json(again)).toMatchObject({ created: total - partial.length, skipped: partial.length, failed: 0 });
    const all = await exportedKills();
    expect(all).toEqual(lines.map((l) => ({ code: l.code, name: l.name, startsAt: l.startsAt })));
  }, 120_000);

  async function exportedKills() {
    const exported = await s.run([
      "events",
      "export",
      "-o",
      "ndjson",
      "--filter",
      'code sw "KILL-"',
      "--order",
      "code",
    ]);
    expect(exported.exitCode, show(exported)).toBe(0);
    return exported.stdout
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const e = JSON.parse(l) as Record<string, unknown>;
        return { code: e.code, name: e.name, startsAt: e.startsAt };
      });
  }
});
