import { beforeAll, describe, expect, it } from "vitest";
import { errorOf, json, MODES, show } from "../helpers/cli.js";
import { expectScenario, useInProcessSession } from "../helpers/in-process.js";

/** Issue 15 part 3: unknown --fields exit 7 everywhere, --query (JMESPath), api -i/-H/--paginate. */

const NO_COLOR = { NO_COLOR: "1" };
const TERMINAL = { tty: true, env: NO_COLOR };

describe.each(MODES)("--fields, --query and api (%s)", (mode) => {
  const s = useInProcessSession(mode);
  beforeAll(async () => {
    for (const n of [1, 2, 3, 4, 5]) {
      const created = await s.run([
        "events",
        "create",
        "--set",
        `code=Q${n}`,
        "--set",
        `name=Query ${n}`,
        "--set",
        `startsAt=2027-03-0${n}T10:00:00Z`,
        "--set",
        `type=${n % 2 ? "meeting" : "call"}`,
        "--set",
        `customFields.budget=${n * 100}`,
      ]);
      expect(created.exitCode, show(created)).toBe(0);
    }
    const room = await s.run([
      "resources",
      "create",
      "--set",
      "resourceType=Room",
      "--set",
      "name=Blue",
      "--set",
      "seats=8",
    ]);
    expect(room.exitCode, show(room)).toBe(0);
  });

  const UNKNOWN: [string, string[]][] = [
    ["events list", ["events", "list", "--fields", "code,nosuch"]],
    ["events get", ["events", "get", "Q1", "--fields", "nosuch"]],
    ["users list", ["users", "list", "--fields", "userName,nosuch"]],
    ["users get", ["users", "get", "admin", "--fields", "name.nosuch"]],
    // write-only: never printed, so never a field to show
    ["users list --fields password", ["users", "list", "--fields", "userName,password"]],
    ["resources list of a custom type", ["resources", "list", "--type", "Room", "--fields", "name,colour"]],
    ["profile list", ["profile", "list", "--fields", "name,nosuch"]],
  ];

  it.each(UNKNOWN)("an unknown field exits 7 piped: %s", async (name, args) => {
    const result = await expectScenario(s, { name, args, wantExit: 7, wantStdout: "" });
    expect(["unknown_field", "validation_failed"]).toContain(errorOf(result).code);
    // the hint lists what can be shown: never the write-only password
    expect(errorOf(result).hint ?? "").not.toMatch(/\bpassword\b(?!ChangedAt)/);
  });

  it.each([
    ["a misspelt attribute", ["users", "list", "--filter", 'nmae eq "x"'], /Users cannot be filtered by 'nmae'/],
    ["a boolean compared with text", ["users", "list", "--filter", 'active eq "yes"'], /'active' is true or false/],
    ["an order by no attribute", ["users", "list", "--sort-by", "nope"], /Users cannot be sorted by 'nope'/],
    [
      "an event filter's misspelt field",
      ["events", "list", "--filter", 'nmae eq "x"'],
      /Events cannot be filtered by 'nmae'/,
    ],
  ])("%s exits 7 rather than matching nothing", async (name, args, message) => {
    await expectScenario(s, { name, args, wantExit: 7, wantStdout: "", wantStderr: message });
    await expectScenario(s, { name, args, ...TERMINAL, wantExit: 7, wantStdout: "", wantStderr: message });
  });

  it.each(UNKNOWN)("an unknown field exits 7 on a terminal: %s", async (name, args) => {
    await expectScenario(s, {
      name,
      args,
      ...TERMINAL,
      wantExit: 7,
      wantStdout: "",
      wantStderr: /^error: .*(Unknown field|field)/m,
    });
  });

  // [what, the write with a typo in --fields, a read that shows nothing was written]
  const WRITES: [string, string[], string[]][] = [
    [
      "events create",
      ["events", "create", "--set", "code=TYPO1", "--set", "name=x", "--set", "startsAt=2027-01-01T00:00:00Z"],
      ["events", "get", "TYPO1"],
    ],
    ["events update", ["events", "update", "Q1", "--set", "name=changed"], ["events", "get", "Q1"]],
    ["users create", ["users", "create", "--user-name", "typo.user", "--no-password"], ["users", "get", "typo.user"]],
    ["users update", ["users", "update", "admin", "--set", "title=changed"], ["users", "get", "admin"]],
  ];

  it.each(WRITES)("%s with an unknown field exits 7 and writes nothing", async (_name, write, read) => {
    const before = await s.run(read);
    const result = await s.run([...write, "--fields", "nosuch"]);
    expect(result.exitCode, show(result)).toBe(7);
    expect(errorOf(result).code).toBe("unknown_field");
    const after = await s.run(read);
    expect(after.exitCode).toBe(before.exitCode);
    expect(after.stdout).toBe(before.stdout);
  });

  it.each([
    ["schema fields no record has", ["users", "list", "--fields", "userName,nickName,name.givenName,lockedUntil"]],
    ["a custom type's own attribute", ["resources", "list", "--type", "Room", "--fields", "name,seats"]],
    ["a free-form object's member", ["users", "list", "--fields", "userName,meta.version"]],
  ])("known fields still print: %s", async (_name, args) => {
    const result = await s.run(args);
    expect(result.exitCode, show(result)).toBe(0);
    expect(json(result).length).toBeGreaterThan(0);
  });

  // issue 32: the README's dotted paths answered 400 on events, whose server selects whole fields
  it.each([
    ["events list", ["events", "list", "--filter", 'code eq "Q2"']],
    ["events get", ["events", "get", "Q2"]],
  ])("%s --fields takes a dotted path into customFields, piped and on a terminal", async (_name, args) => {
    const piped = await s.run([...args, "--fields", "code,customFields.budget"]);
    expect(piped.exitCode, show(piped)).toBe(0);
    expect([json(piped)].flat()).toEqual([{ code: "Q2", customFields: { budget: 200 } }]);
    const table = await s.run([...args, "--fields", "code,customFields.budget"], TERMINAL);
    expect(table.exitCode, show(table)).toBe(0);
    expect(table.stdout).toMatch(/customFields\.budget/);
    expect(table.stdout).toMatch(/\b200\b/);
  });

  it("--query reshapes the JSON, after --fields", async () => {
    const codes = await s.run(["events", "list", "--query", "[?type=='meeting'].code"]);
    expect(json(codes), show(codes)).toEqual(["Q1", "Q3", "Q5"]);
    const shaped = await s.run(["events", "list", "--fields", "code,name", "--query", "[0].{c: code, n: name}"]);
    expect(json(shaped)).toEqual({ c: "Q1", n: "Query 1" });
  });

  it.each([
    ["yaml", ["-o", "yaml"], "- Q1\n- Q2\n"],
    ["csv", ["-o", "csv"], "Q1,Query 1\nQ2,Query 2\n"],
    ["ndjson", ["-o", "ndjson"], '"Q1"\n"Q2"\n'],
  ])("--query applies before rendering in %s", async (format, flags, expected) => {
    const query = format === "csv" ? "[0:2].[code, name]" : "[0:2].code";
    const result = await s.run(["events", "list", "--query", query, ...flags]);
    expect(result.stdout, show(result)).toBe(expected);
  });

  it("--query on a terminal: a table of the objects it made, values one a line", async () => {
    await expectScenario(s, {
      name: "objects",
      args: ["events", "list", "--query", "[0:2].{c: code, kind: type}"],
      ...TERMINAL,
      wantExit: 0,
      wantStdout: (table) => {
        expect(table).toMatch(/c\s+.*kind/);
        expect(table).toMatch(/Q1\s+.*meeting/);
      },
    });
    const values = ["events", "list", "--query", "[0:2].code"];
    await expectScenario(s, { name: "values", args: values, ...TERMINAL, wantExit: 0, wantStdout: /^Q1\nQ2$/m });
  });

  it("a bad --query exits 2 before anything runs, piped and on a terminal", async () => {
    const piped = await s.run(["events", "create", "--set", "code=NEVER", "--set", "name=x", "--query", "[?"]);
    expect(piped.exitCode, show(piped)).toBe(2);
    expect(errorOf(piped).message).toMatch(/--query/);
    await expectScenario(s, {
      name: "terminal",
      args: ["events", "list", "--query", "foo("],
      ...TERMINAL,
      wantExit: 2,
      wantStderr: /error: --query 'foo\(' is not a JMESPath expression/,
    });
    expect((await s.run(["events", "get", "NEVER"])).exitCode).toBe(3);
  });

  it("api -i prints the status line and headers before the body (piped)", async () => {
    const result = await s.run(["api", "-i", "GET", "/api/crm/v1/events?pagesize=2"]);
    expect(result.exitCode, show(result)).toBe(0);
    const [head, body] = result.stdout.split(/\n\n/, 2) as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\n/);
    expect(head).toMatch(/^link: .*rel="next"/m);
    expect(head).toMatch(/^content-type: application\/json/m);
    expect(JSON.parse(body).data).toHaveLength(2);
  });

  it("api -i on a terminal, and on an error still exits with its code", async () => {
    await expectScenario(s, {
      name: "404",
      args: ["api", "-i", "GET", "/api/crm/v1/events/NOPE"],
      ...TERMINAL,
      wantExit: 3,
      wantStdout: /HTTP\/1\.1 404 Not Found/,
      wantStderr: /error: No event with code NOPE/,
    });
  });

  it("api -H sends the header: a bad Authorization replaces the credential", async () => {
    const refused = await s.run(["api", "GET", "/auth/isLogged", "-H", "Authorization: Bearer nonsense"]);
    expect(refused.exitCode, show(refused)).toBe(4);
    const bad = await s.run(["api", "GET", "/auth/isLogged", "-H", "no colon"]);
    expect(bad.exitCode).toBe(2);
    expect(errorOf(bad).message).toMatch(/Name: value/);
  });

  it("api --paginate follows Link rel=next and joins the pages", async () => {
    const result = await s.run(["api", "GET", "/api/crm/v1/events?pagesize=2", "--paginate"]);
    expect(result.exitCode, show(result)).toBe(0);
    const merged = json(result);
    expect(merged.data.map((e: { code: string }) => e.code)).toEqual(["Q1", "Q2", "Q3", "Q4", "Q5"]);
    expect(merged.page).toBe(3);
    const heads = await s.run(["api", "-i", "GET", "/api/crm/v1/events?pagesize=2", "--paginate"]);
    expect(heads.stdout.match(/^HTTP\/1\.1 200 OK$/gm)).toHaveLength(3);
    const post = await s.run(["api", "POST", "/api/crm/v1/events", "--paginate", "--data", "{}"]);
    expect(post.exitCode).toBe(2);
  });

  it("api --paginate on a terminal prints one table of every page", async () => {
    await expectScenario(s, {
      name: "paginate",
      args: ["api", "GET", "/api/crm/v1/events?pagesize=2", "--paginate", "--query", "data[].code"],
      ...TERMINAL,
      wantExit: 0,
      wantStdout: /Q1\nQ2\nQ3\nQ4\nQ5/,
    });
  });
});
