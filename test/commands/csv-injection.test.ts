/**
 * CSV formula injection through the commands, in both modes: text anyone can store (a failed
 * login's User-Agent needs no account) reaches an admin's `-o csv` as a cell no spreadsheet runs,
 * and `events export` / `users export` as CSV still import back as exactly the same data.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { type CliResult, errorOf, httpJson, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

const EVIL_AGENT = '=HYPERLINK("http://evil/")';

/** What a spreadsheet runs as a formula when a cell starts with it (OWASP "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** The cells of a CSV output as written (no mark removed), header row first. */
const cellsOf = (result: CliResult): string[][] => parse(result.stdout) as string[][];

function expectNoFormula(result: CliResult): void {
  for (const row of cellsOf(result)) for (const cell of row) expect(cell, show(result)).not.toMatch(FORMULA_START);
}

/** Events whose text fields start with each formula trigger, with the mark itself, or with nothing special. */
const EVENTS = [
  { code: "CSV-EQ", name: "=1+1", description: EVIL_AGENT, location: "=A1", tags: ["=t", "x"] },
  { code: "CSV-PLUS", name: "+1", description: "+d", location: "+l", tags: ["+t"] },
  { code: "CSV-MINUS", name: "-5", description: "-d", location: "-5", tags: ["-t", "y"] },
  { code: "CSV-AT", name: "@SUM(A1:A2)", description: "@d", location: "@l", tags: ["@t"] },
  // each tag of the comma-separated tags cell is trimmed on import, a leading tab too
  { code: "CSV-TAB", name: "\t=1+1", description: "\td", location: "\tl", tags: ["tab"] },
  { code: "CSV-CR", name: "\r=1+1", description: "\rd", location: "\rl", tags: ["cr"] },
  { code: "CSV-QUOTE", name: "'quoted", description: "''two", location: "'", tags: ["'t", "z"] },
  { code: "CSV-PLAIN", name: "Plain", description: "a=b-c", location: "Room 4", tags: ["a", "b"] },
].map((event, index) => ({ ...event, startsAt: `2027-05-0${index + 1}T09:00:00Z` }));

const EVENT_FIELDS = ["code", "name", "description", "location", "tags", "startsAt"] as const;

/** Users whose display name and title start with `=`, `-`, the mark, or nothing special; in export order. */
const USERS = [
  { userName: "csv.eq", displayName: "=1+1", title: EVIL_AGENT, nickName: "@nick", department: "+d" },
  { userName: "csv.minus", displayName: "-5", title: "-title", nickName: "\tnick", department: "\rd" },
  { userName: "csv.plain", displayName: "Plain", title: "Engineer", nickName: "a=b", department: "R&D" },
  { userName: "csv.quote", displayName: "'quoted", title: "''", nickName: "'", department: "'=x" },
];

const USER_FIELDS = ["userName", "displayName", "title", "nickName", "department", "active", "roles"] as const;

const fieldsOf = <T extends Record<string, unknown>>(record: T, fields: readonly string[]) =>
  Object.fromEntries(fields.map((field) => [field, record[field]]));

describe.each(MODES)("CSV a spreadsheet cannot run (%s)", (mode) => {
  const s = useInProcessSession(mode, {}, 60_000);

  const ok = (result: CliResult) => expect(result.exitCode, show(result)).toBe(0);

  it("a failed login's User-Agent, sent without an account, is a neutralised cell in audit list -o csv", async () => {
    const body = { userName: "nobody-at-all", password: "not a password of anyone 0" };
    if (s.server) {
      const refused = await httpJson(s.server, "POST", "/auth/login", body, { "user-agent": EVIL_AGENT });
      expect(refused.status).toBe(401);
    } else {
      const refused = await s.run([
        "api",
        "POST",
        "/auth/login",
        "-H",
        `User-Agent: ${EVIL_AGENT}`,
        "--data",
        JSON.stringify(body),
      ]);
      expect(refused.exitCode, show(refused)).toBe(4);
      expect(errorOf(refused).code).toBe("invalid_credentials");
    }
    const listed = await s.run([
      "audit",
      "list",
      "-o",
      "csv",
      "--filter",
      'action eq "login" and outcome ne "success"',
    ]);
    ok(listed);
    expectNoFormula(listed);
    const [header, ...rows] = cellsOf(listed);
    const agents = rows.map((row) => row[header!.indexOf("userAgent")]);
    expect(agents).toEqual([`'${EVIL_AGENT}`]);
    expect(listed.stdout).toContain(`"'=HYPERLINK(""http://evil/"")"`);
  });

  it("events export -o csv neutralises every cell, and imports back as the same events", async () => {
    const source = join(s.sandbox.root, "events.json");
    await writeFile(source, JSON.stringify(EVENTS));
    ok(await s.run(["events", "import", source]));
    const before = json<Record<string, unknown>[]>(await s.run(["events", "export", "--json"]));
    expect(before.map((event) => fieldsOf(event, EVENT_FIELDS))).toEqual(
      EVENTS.map((event) => fieldsOf(event, EVENT_FIELDS)),
    );

    const exported = await s.run(["events", "export", "-o", "csv"]);
    ok(exported);
    expectNoFormula(exported);
    const file = join(s.sandbox.root, "events.csv");
    await writeFile(file, exported.stdout);

    ok(await s.run(["events", "delete", ...EVENTS.map((event) => event.code), "--yes"]));
    const imported = await s.run(["events", "import", file, "--json"]);
    ok(imported);
    expect(json(imported)).toMatchObject({ created: EVENTS.length, failed: 0 });

    const after = json<Record<string, unknown>[]>(await s.run(["events", "export", "--json"]));
    expect(after.map((event) => fieldsOf(event, EVENT_FIELDS))).toEqual(
      before.map((event) => fieldsOf(event, EVENT_FIELDS)),
    );
  });

  it("users export -o csv neutralises every cell, and imports back as the same users", async () => {
    const ndjson = join(s.sandbox.root, "users.ndjson");
    await writeFile(ndjson, USERS.map((user) => `${JSON.stringify(user)}\n`).join(""));
    ok(await s.run(["users", "import", ndjson]));
    const exportedUsers = async () =>
      json<Record<string, unknown>[]>(await s.run(["users", "export", "--json"]))
        .filter((user) => String(user.userName).startsWith("csv."))
        .map((user) => fieldsOf(user, USER_FIELDS));
    const before = await exportedUsers();
    expect(before.map((user) => fieldsOf(user, Object.keys(USERS[0]!)))).toEqual(USERS);

    const exported = await s.run(["users", "export", "-o", "csv", "--filter", 'userName sw "csv."']);
    ok(exported);
    expectNoFormula(exported);
    const file = join(s.sandbox.root, "users.csv");
    await writeFile(file, exported.stdout);

    ok(await s.run(["users", "delete", ...USERS.map((user) => user.userName), "--yes"]));
    // a deleted user keeps its name until purged
    for (const user of USERS) ok(await s.run(["users", "purge", user.userName, "--yes"]));
    const imported = await s.run(["users", "import", file, "--json"]);
    ok(imported);

    expect(await exportedUsers()).toEqual(before);
  });
});
