import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BIN, json, ROOT, show } from "../helpers/cli.js";
import { event, IMPORT_STORES, importFiles, ndjson, useImportSession } from "../helpers/events-import.js";

/**
 * An `events import` process killed with SIGKILL half-way leaves whole batches behind, and the
 * same import run again with `--on-conflict skip` ends with exactly the file, on each store (a
 * batch already sent may still land after the kill: the server finishes a request it has read). The
 * import that is killed is the binary; the set-up, the counts and the run again are commands in
 * this process (test/commands/events-bulk-import.test.ts has the rest of the import's behaviour).
 */

describe.each(IMPORT_STORES)("events import killed half-way (%s)", (store) => {
  const s = useImportSession(store);

  const { file, importFile, exported } = importFiles(s);

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
    // A remote server may still commit the batch whose request was in flight when the client was
    // killed, after the export above: the run again skips at least what that export saw.
    const summary = json<{ created: number; skipped: number; failed: number }>(again);
    expect(summary.failed).toBe(0);
    expect(summary.created + summary.skipped).toBe(total);
    expect(summary.skipped).toBeGreaterThanOrEqual(partial.length);
    expect(summary.skipped).toBeLessThan(total);
    const all = await exportedKills();
    expect(all).toEqual(lines.map((l) => ({ code: l.code, name: l.name, startsAt: l.startsAt })));
  }, 120_000);

  async function exportedKills() {
    return (await exported("KILL-")).map((e) => ({ code: e.code, name: e.name, startsAt: e.startsAt }));
  }
});
