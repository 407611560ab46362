// `events list --all` and `events export` follow the Link next cursor page by page and stream the
// pages out, embedded and against a running server.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { EVENT_FIELDS } from "../../src/contract/events.js";
import { json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

const COUNT = 237;
/** more than two pages of 100; three events per start time, so that the cursor crosses ties */
const EVENTS = Array.from({ length: COUNT }, (_, i) => ({
  code: `PG-${String((i * 101) % COUNT).padStart(3, "0")}`,
  name: `Paged ${i}`,
  startsAt: new Date(Date.UTC(2027, 5, 1) + Math.floor(i / 3) * 3_600_000).toISOString(),
  type: i % 2 ? "webinar" : "call",
}));

describe.each(MODES)("events paging through the cursor (%s)", (mode) => {
  const s = useInProcessSession(mode);
  beforeAll(async () => {
    const file = join(s.sandbox.root, "paged.json");
    writeFileSync(file, JSON.stringify(EVENTS));
    const imported = await s.run(["events", "import", file, "--json"]);
    if (imported.exitCode !== 0) throw new Error(show(imported));
  });

  /** the expected codes: startsAt then code, or -startsAt then -code (ties follow the order) */
  const expected = (descending: boolean, keep: (e: (typeof EVENTS)[number]) => boolean = () => true) =>
    EVENTS.filter(keep)
      .sort(
        (a, b) =>
          (a.startsAt === b.startsAt
            ? a.code.toLowerCase().localeCompare(b.code.toLowerCase())
            : a.startsAt < b.startsAt
              ? -1
              : 1) * (descending ? -1 : 1),
      )
      .map((e) => e.code);

  it.each([
    ["list --all", ["events", "list", "--all", "--json"], false],
    [
      "list --all, pages of 7, -startsAt",
      ["events", "list", "--all", "--page-size", "7", "--order", "-startsAt", "--json"],
      true,
    ],
    ["export", ["events", "export", "--json"], false],
    ["export -startsAt", ["events", "export", "--order", "-startsAt", "--json"], true],
  ] as const)("%s returns every event once, in order", async (_label, args, descending) => {
    const result = await s.run([...args]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(json<{ code: string }[]>(result).map((e) => e.code)).toEqual(expected(descending));
  });

  it("export -o ndjson and -o csv stream every event, a filter keeping its matches", async () => {
    const ndjson = await s.run(["events", "export", "-o", "ndjson"]);
    expect(ndjson.exitCode, show(ndjson)).toBe(0);
    const lines = ndjson.stdout.trim().split("\n");
    expect(lines.map((l) => JSON.parse(l).code)).toEqual(expected(false));
    expect(ndjson.stderr).toContain(`Exported ${COUNT} event(s).`);

    const csv = await s.run(["events", "export", "-o", "csv", "--filter", 'type eq "webinar"']);
    expect(csv.exitCode, show(csv)).toBe(0);
    // no value here holds a comma or a quote: the lines split plainly
    const [header, ...rows] = csv.stdout
      .trim()
      .split("\n")
      .map((line) => line.split(","));
    expect(header).toEqual([...EVENT_FIELDS]);
    const records = rows.map((row) => Object.fromEntries(header!.map((column, i) => [column, row[i]])));
    expect(records.map((r) => r.code)).toEqual(expected(false, (e) => e.type === "webinar"));
    expect(records[0]).toMatchObject({ type: "webinar", createdBy: s.userName, version: "1" });
  });

  it("export of nothing is an empty array, and list --all from a later page starts there", async () => {
    const none = await s.run(["events", "export", "--json", "--filter", 'type eq "nothing"']);
    expect(none.exitCode, show(none)).toBe(0);
    expect(json(none)).toEqual([]);
    const later = await s.run(["events", "list", "--all", "--page", "3", "--page-size", "50", "--json"]);
    expect(later.exitCode, show(later)).toBe(0);
    expect(json<{ code: string }[]>(later).map((e) => e.code)).toEqual(expected(false).slice(100));
  });
});
