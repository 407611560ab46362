import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { errorOf, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

describe.each(MODES)("events import and export (%s)", (mode) => {
  const s = useInProcessSession(mode);

  const codes = async () =>
    json<{ code: string }[]>(await s.run(["events", "list", "--page-size", "100", "--json"])).map((e) => e.code);

  it("imports a JSON array, then NDJSON from stdin, and export returns every event with all fields", async () => {
    const file = join(s.sandbox.root, "events.json");
    writeFileSync(
      file,
      JSON.stringify([
        { code: "IMP-1", name: "One", startsAt: "2027-02-01T09:00:00Z", tags: ["a"] },
        { code: "IMP-2", name: "Two", startsAt: "2027-02-02T09:00:00Z", customFields: { room: 4 } },
      ]),
    );
    const imported = await s.run(["events", "import", file, "--json"]);
    expect(imported.exitCode, show(imported)).toBe(0);
    // a summary and the failures only (none here)
    expect(json(imported)).toEqual({ read: 2, created: 2, updated: 0, skipped: 0, failed: 0, failures: [] });
    const ndjson = `${JSON.stringify({ code: "IMP-3", name: "Three", startsAt: "2027-02-03T09:00:00Z" })}\n${JSON.stringify({ code: "IMP-4", name: "Four", startsAt: "2027-02-04T09:00:00Z" })}\n`;
    expect((await s.run(["events", "import", "-"], { input: ndjson })).exitCode).toBe(0);

    const exported = await s.run(["events", "export", "--json"]);
    expect(exported.exitCode, show(exported)).toBe(0);
    const all = json<Record<string, unknown>[]>(exported);
    expect(all.map((e) => e.code)).toEqual(["IMP-1", "IMP-2", "IMP-3", "IMP-4"]);
    expect(all[0]).toMatchObject({ tags: ["a"], createdBy: s.userName, version: 1 });
    expect(all[1]).toMatchObject({ customFields: { room: 4 } });

    const ndjsonOut = await s.run(["events", "export", "-o", "ndjson", "--filter", 'code sw "imp-1"']);
    expect(
      ndjsonOut.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).code),
    ).toEqual(["IMP-1"]);
  });

  it("re-importing an export reports the duplicate with its position, goes on, and exits 6", async () => {
    const exported = await s.run(["events", "export", "--json"]);
    const file = join(s.sandbox.root, "again.json");
    const records = json<Record<string, unknown>[]>(exported);
    writeFileSync(
      file,
      JSON.stringify([...records.slice(0, 1), { code: "IMP-NEW", name: "New", startsAt: "2027-03-01T00:00:00Z" }]),
    );
    const result = await s.run(["events", "import", file, "--json", "-q"]);
    expect(result.exitCode, show(result)).toBe(6);
    const report = json<{ created: number; failed: number; failures: Record<string, unknown>[] }>(result);
    expect(report).toMatchObject({ created: 1, failed: 1 });
    expect(report.failures).toEqual([
      { line: 1, code: "IMP-1", problem: "conflict", message: expect.stringMatching(/already exists/) },
    ]);
    expect(errorOf(result).code).toBe("import_incomplete");
    expect(await codes()).toContain("IMP-NEW");
  });

  it("imports nothing from empty stdin, reports items that are not events, and creates nothing", async () => {
    const before = await codes();
    const empty = await s.run(["events", "import", "-"], { input: "" });
    expect(empty.exitCode, show(empty)).toBe(0);
    expect(empty.stderr).toMatch(/stdin holds no events: nothing to import/);
    const bad = join(s.sandbox.root, "bad.json");
    writeFileSync(bad, "[1, 2]");
    const result = await s.run(["events", "import", bad]);
    expect(result.exitCode, show(result)).toBe(7);
    expect(json<{ failures: unknown[] }>(result).failures).toEqual([
      { line: 1, problem: "not_an_object", message: "not an object" },
      { line: 2, problem: "not_an_object", message: "not an object" },
    ]);
    expect(errorOf(result).code).toBe("import_incomplete");
    expect((await s.run(["events", "import", join(s.sandbox.root, "missing.json")])).exitCode).toBe(2);
    expect(await codes()).toEqual(before);
  });
});
