import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ADMIN,
  type CliResult,
  createEventArgv,
  errorOf,
  type ImportFileScenario,
  json,
  PASSWORD,
  show,
  startServer,
} from "../helpers/cli.js";
import { event, IMPORT_STORES, importFiles, ndjson, useImportSession } from "../helpers/events-import.js";

/**
 * `events import` streamed in batches, through the command in this process: SQLite embedded, and
 * real `server start` processes on SQLite and PostgreSQL. An import whose process is killed
 * half-way runs the binary: test/e2e/events-import-killed.test.ts.
 */

interface Failure {
  line: number;
  column?: number;
  code?: string;
  problem: string;
  message: string;
}
interface Report {
  created: number;
  updated: number;
  skipped: number;
  failed: number;
  failures: Failure[];
}

describe.each(IMPORT_STORES)("events import, streamed in batches (%s)", (store) => {
  const s = useImportSession(store);

  const { file, importFile, exported } = importFiles(s);
  const report = (result: CliResult) => json<Report>(result);
  /** Every event with every field, as export writes it: equal digests, equal stores. */
  const digest = async () => {
    const exported = await s.run(["events", "export", "-o", "ndjson"]);
    expect(exported.exitCode, show(exported)).toBe(0);
    return createHash("sha256").update(exported.stdout).digest("hex");
  };
  const getEvent = async (code: string) => {
    const got = await s.run(["events", "get", code, "--json"]);
    return got.exitCode === 0 ? json<Record<string, unknown>>(got) : undefined;
  };

  const bom = "\uFEFF";
  const scenarios: (ImportFileScenario & {
    counts: Partial<Report>;
    failures: Partial<Failure>[];
    stored?: Record<string, Partial<Record<string, unknown>> | undefined>;
  })[] = [
    {
      name: "a malformed line is reported with its line number; the rest are created",
      file: "malformed.ndjson",
      content: ndjson(event("MAL-1"), "{not json", "", event("MAL-2"), "[1]"),
      exit: 7,
      counts: { created: 2, failed: 2 },
      failures: [
        { line: 2, problem: "malformed" },
        { line: 5, problem: "not_an_object" },
      ],
      stored: { "MAL-2": { name: "Event MAL-2" } },
    },
    {
      name: "a code twice in one file: the second is a conflict",
      file: "twice.ndjson",
      content: ndjson(event("TWICE-1", "first"), event("twice-1", "second"), event("TWICE-2")),
      exit: 6,
      counts: { created: 2, failed: 1 },
      failures: [{ line: 2, code: "twice-1", problem: "conflict" }],
      stored: { "TWICE-1": { name: "first" } },
    },
    {
      name: "a code twice in one file under update: the later fields win",
      file: "twice-update.ndjson",
      content: ndjson(event("TWUP-1", "first"), event("TWUP-1", "second")),
      args: ["--on-conflict", "update"],
      exit: 0,
      counts: { created: 1, updated: 1, failed: 0 },
      failures: [],
      stored: { "TWUP-1": { name: "second" } },
    },
    {
      name: "CSV with a byte-order mark, quoted commas and newlines, UTF-8 names; invalid cell at its column",
      file: "events.csv",
      content: `${bom}code,name,startsAt,tags\r\nCSV-1,"Zoë, Ørsted and ""Müller""",2027-05-01T09:00:00Z,"a, b"\r\nCSV-2,"two\r\nlines — 日本",2027-05-02T09:00:00Z,\r\nCSV-3,bad date,tomorrow,\r\n`,
      exit: 7,
      counts: { created: 2, failed: 1 },
      failures: [{ line: 5, column: 3, code: "CSV-3", problem: "validation_failed" }],
      stored: {
        "CSV-1": { name: 'Zoë, Ørsted and "Müller"', tags: ["a", "b"] },
        "CSV-2": { name: "two\r\nlines — 日本" },
        "CSV-3": undefined,
      },
    },
    {
      name: "a JSON array: a failure gives the element's position",
      file: "array.json",
      content: JSON.stringify([event("ARR-1"), { ...event("ARR-2"), endsAt: "2027-04-01T00:00:00Z" }, 7]),
      exit: 7,
      counts: { created: 1, failed: 2 },
      failures: [
        { line: 2, code: "ARR-2", problem: "validation_failed" },
        { line: 3, problem: "not_an_object" },
      ],
    },
    {
      name: "every line bad: all reported, nothing created",
      file: "all-bad.ndjson",
      content: ndjson({ code: "BAD-1" }, { code: "BAD-2", name: "x", startsAt: "never" }, "nope", { name: 3 }),
      exit: 7,
      counts: { created: 0, failed: 4 },
      failures: [
        { line: 1, problem: "validation_failed" },
        { line: 2, problem: "validation_failed" },
        { line: 3, problem: "malformed" },
        { line: 4, problem: "validation_failed" },
      ],
    },
  ];

  it.each(scenarios)("$name", async (scenario) => {
    const path = file(scenario.file, scenario.content);
    const result = await importFile(path, "--batch-size", "2", ...(scenario.args ?? []));
    expect(result.exitCode, show(result)).toBe(scenario.exit);
    const got = report(result);
    expect(got).toMatchObject(scenario.counts);
    expect(got.failures).toHaveLength(scenario.failures.length);
    expect(got.failures).toMatchObject(scenario.failures);
    if (scenario.exit !== 0) expect(errorOf(result).code).toBe("import_incomplete");
    for (const [code, fields] of Object.entries(scenario.stored ?? {})) {
      const stored = await getEvent(code);
      if (fields === undefined) expect(stored).toBeUndefined();
      else expect(stored).toMatchObject(fields);
    }
  });

  it("an input without events imports nothing and exits 0, as a filter that matched nothing would pipe it", async () => {
    const before = await digest();
    for (const [name, content] of [
      ["empty.ndjson", ""],
      ["blank.ndjson", "\n  \n"],
      ["empty.json", "[]"],
      ["header.csv", "code,name,startsAt\n"],
    ]) {
      const result = await s.run(["events", "import", file(name!, content!), "--json"]);
      expect(result.exitCode, show(result)).toBe(0);
      expect(report(result)).toMatchObject({ created: 0, updated: 0, skipped: 0, failed: 0 });
      expect(result.stderr).toMatch(/holds no events: nothing to import/);
    }
    expect(await digest()).toBe(before);
  });

  const policies: { policy: string; exit: number; counts: Partial<Report>; name: string; version: number }[] = [
    { policy: "fail", exit: 6, counts: { created: 1, skipped: 0, updated: 0, failed: 1 }, name: "old", version: 1 },
    { policy: "skip", exit: 0, counts: { created: 1, skipped: 1, updated: 0, failed: 0 }, name: "old", version: 1 },
    { policy: "update", exit: 0, counts: { created: 1, skipped: 0, updated: 1, failed: 0 }, name: "new", version: 2 },
  ];
  it.each(policies)("a conflict with a stored event under --on-conflict $policy", async (p) => {
    const code = `POL-${p.policy}`;
    const created = await s.run(createEventArgv(code, "old", "2027-01-01T00:00:00Z"));
    expect(created.exitCode, show(created)).toBe(0);
    const path = file(`${p.policy}.ndjson`, ndjson(event(code.toLowerCase(), "new"), event(`${code}-NEW`)));
    const result = await importFile(path, "--on-conflict", p.policy);
    expect(result.exitCode, show(result)).toBe(p.exit);
    const got = report(result);
    expect(got).toMatchObject(p.counts);
    if (p.policy === "fail") expect(got.failures).toMatchObject([{ line: 1, problem: "conflict" }]);
    else expect(got.failures).toEqual([]);
    expect(await getEvent(code)).toMatchObject({ code, name: p.name, version: p.version });
    expect(await getEvent(`${code}-NEW`)).toBeDefined();
  });

  it("--report writes the failures as NDJSON", async () => {
    const path = file("for-report.ndjson", ndjson(event("REP-1"), "{", { code: "REP-2" }));
    const out = join(s.sandbox.root, "failures.ndjson");
    const result = await importFile(path, "--report", out);
    expect(result.exitCode, show(result)).toBe(7);
    const lines = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Failure);
    expect(lines.map((l) => [l.line, l.problem]).sort()).toEqual([
      [2, "malformed"],
      [3, "validation_failed"],
    ]);
  });

  const unchanged: { name: string; content: string; args: string[]; exit: number }[] = [
    {
      name: "--atomic with one bad line",
      content: ndjson(event("ATO-1"), event("ATO-2"), { ...event("ATO-3"), startsAt: "soon" }, event("ATO-4")),
      args: ["--atomic"],
      exit: 7,
    },
    {
      name: "--atomic with a conflict found only at the commit (the same code in two batches)",
      content: ndjson(event("ATC-1"), event("ATC-2"), event("ATC-3"), event("atc-1")),
      args: ["--atomic"],
      exit: 6,
    },
    {
      name: "--dry-run",
      content: ndjson(event("DRY-1"), event("DRY-2"), event("MAL-1")),
      args: ["--dry-run"],
      exit: 6,
    },
    {
      name: "--dry-run --atomic",
      content: ndjson(event("DRA-1"), event("DRA-2")),
      args: ["--dry-run", "--atomic"],
      exit: 0,
    },
  ];
  it.each(unchanged)("$name leaves the store unchanged (digest before and after)", async (c) => {
    const before = await digest();
    const result = await importFile(file("unchanged.ndjson", c.content), "--batch-size", "2", ...c.args);
    expect(result.exitCode, show(result)).toBe(c.exit);
    expect(await digest()).toBe(before);
    if (c.args.includes("--dry-run") && c.exit === 0) expect(report(result)).toMatchObject({ created: 2 });
  });

  it("--dry-run reports exactly what the same import then does, a code repeated in another batch included", async () => {
    const existing = await importFile(file("dry-existing.ndjson", ndjson(event("DRX-0"))));
    expect(existing.exitCode, show(existing)).toBe(0);
    // DRX-1 and drx-1 are two batches apart; "{" is malformed; DRX-0 exists
    const lines = [event("DRX-1"), event("DRX-2"), event("drx-1"), "{", event("DRX-0"), event("DRX-3")];
    const path = file("dry-exact.ndjson", ndjson(...lines));
    const before = await digest();
    const dry = await importFile(path, "--batch-size", "2", "--dry-run");
    expect(await digest()).toBe(before);
    const real = await importFile(path, "--batch-size", "2");
    expect(report(real)).toMatchObject({ created: 3, failed: 3 });
    // the same failures on the same lines; a dry run may word them better ("came earlier in the same import")
    const outcome = ({ failures, ...counts }: Report) => ({
      ...counts,
      failures: failures.map(({ line, code, problem }) => ({ line, code, problem })),
    });
    expect(outcome(report(dry))).toEqual(outcome(report(real)));
    expect(dry.exitCode, show(dry)).toBe(real.exitCode);
  });

  it("--atomic without failures writes everything", async () => {
    const result = await importFile(
      file("atomic-ok.ndjson", ndjson(event("ATOK-1"), event("ATOK-2"), event("ATOK-3"))),
      "--atomic",
      "--batch-size",
      "2",
    );
    expect(result.exitCode, show(result)).toBe(0);
    expect(report(result)).toMatchObject({ created: 3, failed: 0 });
    expect(await getEvent("ATOK-3")).toBeDefined();
  });

  it.runIf(store === "sqlite remote")(
    "a server outage stops the import (exit 8); run again with skip against the restarted server, it ends with exactly the file",
    async () => {
      const total = 3000;
      const lines = Array.from({ length: total }, (_, i) => event(`OUT-${String(i).padStart(5, "0")}`, `Out ${i}`));
      const path = file("outage.ndjson", ndjson(...lines));
      const importing = s.run(["events", "import", path, "--batch-size", "10", "--json"]);
      const filter = encodeURIComponent('code sw "OUT-"');
      for (let stored = 0; stored === 0; ) {
        stored = json<{ total: number }>(
          await s.run(["api", "GET", `/api/crm/v1/events?pagesize=1&filter=${filter}`]),
        ).total;
      }
      await s.server!.stop();
      const stopped = await importing;
      expect(stopped.exitCode, show(stopped)).toBe(8);
      expect(stopped.stderr).toMatch(/--on-conflict skip/);

      const restarted = await startServer(s.sandbox.dataDir, { env: s.env });
      try {
        const added = await s.run(["profile", "add", "r2", "--server", restarted.url, "--use"]);
        expect(added.exitCode, show(added)).toBe(0);
        expect((await s.login(s.env, ADMIN, PASSWORD)).exitCode).toBe(0);
        const again = await importFile(path, "--on-conflict", "skip");
        expect(again.exitCode, show(again)).toBe(0);
        const got = report(again);
        expect(got.created).toBeGreaterThan(0);
        expect(got.created + got.skipped).toBe(total);
        const all = await exported("OUT-");
        expect(all.map((e) => [e.code, e.name])).toEqual(lines.map((l) => [l.code, l.name]));
      } finally {
        await restarted.stop();
      }
    },
    180_000,
  );
});
