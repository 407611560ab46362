import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { json, MODES, show } from "../helpers/cli.js";
import { expectScenario, type Scenario, useInProcessSession } from "../helpers/in-process.js";
import { inTerminal } from "../helpers/pty.js";

/**
 * Issue 32: acting on what a filter selects. Cleaning up imported users meant
 * `list --query '[].id' | xargs users delete --yes`, a request per user; now `users delete
 * --filter` and `users disable --filter`, in bulk, with a dry run and a confirmation.
 */

// biome-ignore lint/suspicious/noExplicitAny: the tests assert the shape with expect()
type Json = any;

describe.each(MODES)("users delete and disable --filter (%s)", (mode) => {
  const s = useInProcessSession(mode);
  const TEMP = 'department eq "Temp"';

  async function userNames(filter: string): Promise<string[]> {
    const listed = await s.run(["users", "list", "--filter", filter, "--all", "--json"]);
    expect(listed.exitCode, show(listed)).toBe(0);
    return json<{ userName: string }[]>(listed)
      .map((u) => u.userName)
      .sort();
  }

  beforeAll(async () => {
    const rows = Array.from({ length: 12 }, (_, i) => `tmp${String(i).padStart(2, "0")},Temp`);
    const file = join(s.sandbox.root, "temps.csv");
    await writeFile(file, `userName,department\n${rows.join("\n")}\nkeep1,Sales\nkeep2,\n`);
    const imported = await s.run(["users", "import", file]);
    expect(imported.exitCode, show(imported)).toBe(0);
  }, 120_000);

  const REFUSED: { name: string; args: string[]; exit: number; message: RegExp }[] = [
    {
      name: "without a terminal and without --yes",
      args: ["users", "delete", "--filter", TEMP],
      exit: 2,
      message: /Delete 12 user\(s\) matching .*Refusing without a terminal/,
    },
    {
      name: "disable, without a terminal and without --yes",
      args: ["users", "disable", "--filter", TEMP],
      exit: 2,
      message: /Disable 12 user\(s\)/,
    },
    {
      name: "names and --filter",
      args: ["users", "delete", "keep1", "--filter", TEMP, "--yes"],
      exit: 2,
      message: /not both/,
    },
    { name: "neither names nor --filter", args: ["users", "delete", "--yes"], exit: 2, message: /--filter EXPR/ },
    {
      name: "--dry-run without --filter",
      args: ["users", "disable", "keep1", "--dry-run"],
      exit: 2,
      message: /--dry-run/,
    },
    {
      name: "a filter that does not parse",
      args: ["users", "delete", "--filter", "department eq", "--yes"],
      exit: 7,
      message: /./,
    },
    // `--filter "$FILTER"` with FILTER unset selected every user
    ...[
      ["delete", ""],
      ["disable", "  "],
    ].map(([verb, filter]) => ({
      name: `${verb}, an empty filter`,
      args: ["users", verb!, "--filter", filter!, "--yes"],
      exit: 2,
      message: /--filter is empty, which would select every user; .*--filter 'userName pr'/,
    })),
  ];
  it.each(REFUSED)("refused, nothing changed: $name", async ({ args, exit, message }) => {
    const result = await s.run(args);
    expect(result.exitCode, show(result)).toBe(exit);
    expect(result.stderr).toMatch(message);
    expect(await userNames(TEMP)).toHaveLength(12);
    expect(await userNames("active eq false")).toEqual([]);
  });

  it("--dry-run prints the count and the first ids, and changes nothing", async () => {
    const result = await s.run(["users", "delete", "--filter", TEMP, "--dry-run"]);
    expect(result.exitCode, show(result)).toBe(0);
    const out = json<Json>(result);
    expect(out).toMatchObject({ dryRun: true, matched: 12 });
    expect(out.first).toHaveLength(10);
    expect(out.first[0]).toEqual({ id: expect.any(String), userName: expect.stringMatching(/^tmp/) });
    expect(result.stderr).toMatch(/would delete 12 user\(s\): .*and 2 more/);
    expect(await userNames(TEMP)).toHaveLength(12);
  });

  it("disable --filter --yes disables the selected users only", async () => {
    const result = await s.run(["users", "disable", "--filter", TEMP, "--yes"]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(json(result)).toEqual({ matched: 12, disabled: 12, failed: 0, failures: [] });
    expect(await userNames("active eq false")).toEqual(await userNames(TEMP));
    expect(await userNames('userName sw "keep"')).toEqual(["keep1", "keep2"]);
    expect(await userNames('userName sw "keep" and active eq true')).toEqual(["keep1", "keep2"]);
  });

  it("delete --filter --yes deletes the selected users only; run again, nothing matches and it succeeds", async () => {
    const result = await s.run(["users", "delete", "--filter", TEMP, "--yes"]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(json(result)).toEqual({ matched: 12, deleted: 12, failed: 0, failures: [] });
    expect(result.stderr).toContain("Deleted 12 of 12 user(s).");
    expect(await userNames(TEMP)).toEqual([]);
    expect(await userNames('userName sw "keep"')).toEqual(["keep1", "keep2"]);
    const again = await s.run(["users", "delete", "--filter", TEMP, "--yes"]);
    expect(again.exitCode, show(again)).toBe(0);
    expect(json(again)).toEqual({ matched: 0, deleted: 0, failed: 0, failures: [] });
    expect(again.stderr).toMatch(/No user matches/);
  });

  it("a user the server refuses to delete is that user's failure, with its exit code", async () => {
    // the only admin: the server keeps it (last_admin, exit 6); keep1 goes
    const result = await s.run(["users", "delete", "--filter", 'userName eq "admin" or userName eq "keep1"', "--yes"]);
    expect(result.exitCode, show(result)).toBe(6);
    const out = json<Json>(result);
    expect(out).toMatchObject({ matched: 2, deleted: 1, failed: 1 });
    expect(out.failures.map((f: Json) => [f.userName, f.problem])).toEqual([["admin", "last_admin"]]);
    expect(await userNames('userName sw "keep"')).toEqual(["keep2"]);
  });
});

describe.each(MODES)("events delete --filter (%s)", (mode) => {
  const s = useInProcessSession(mode);
  const CI = 'code sw "CI-"';

  async function codes(filter: string): Promise<string[]> {
    const listed = await s.run(["events", "list", "--filter", filter, "--all", "--json"]);
    expect(listed.exitCode, show(listed)).toBe(0);
    return json<{ code: string }[]>(listed)
      .map((e) => e.code)
      .sort();
  }

  beforeAll(async () => {
    const lines = Array.from({ length: 25 }, (_, i) =>
      JSON.stringify({ code: `CI-${i}`, name: `ci ${i}`, startsAt: "2027-05-01T10:00:00Z" }),
    );
    lines.push(JSON.stringify({ code: "KEEP-1", name: "kept", startsAt: "2027-05-01T10:00:00Z" }));
    const file = join(s.sandbox.root, "ci-events.ndjson");
    await writeFile(file, `${lines.join("\n")}\n`);
    const imported = await s.run(["events", "import", file]);
    expect(imported.exitCode, show(imported)).toBe(0);
  }, 120_000);

  it.each([
    { name: "without a terminal and without --yes", args: ["--filter", CI], exit: 2, message: /Delete 25 event\(s\)/ },
    { name: "codes and --filter", args: ["KEEP-1", "--filter", CI, "--yes"], exit: 2, message: /not both/ },
    { name: "a filter that does not parse", args: ["--filter", "code sw", "--yes"], exit: 7, message: /./ },
    {
      name: "an empty filter",
      args: ["--filter", "", "--yes"],
      exit: 2,
      message: /--filter is empty, which would select every event; .*--filter 'code pr'/,
    },
  ])("refused, nothing deleted: $name", async ({ args, exit, message }) => {
    const result = await s.run(["events", "delete", ...args]);
    expect(result.exitCode, show(result)).toBe(exit);
    expect(result.stderr).toMatch(message);
    expect(await codes(CI)).toHaveLength(25);
  });

  it("--dry-run prints the count and the first codes", async () => {
    const result = await s.run(["events", "delete", "--filter", CI, "--dry-run"]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(json(result)).toMatchObject({ dryRun: true, matched: 25 });
    expect(json(result).first).toHaveLength(10);
    expect(await codes(CI)).toHaveLength(25);
  });

  it("--yes deletes every selected event (more than a page) and no other; again, nothing matches and it passes", async () => {
    const result = await s.run(["events", "delete", "--filter", CI, "--yes"]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(json(result)).toEqual({ matched: 25, deleted: 25, notFound: 0 });
    expect(await codes(CI)).toEqual([]);
    expect(await codes('code eq "KEEP-1"')).toEqual(["KEEP-1"]);
    const again = await s.run(["events", "delete", "--filter", CI, "--yes"]);
    expect(again.exitCode, show(again)).toBe(0);
    expect(json(again)).toEqual({ matched: 0, deleted: 0, notFound: 0 });
  });
});

describe.each(MODES)("act-by-filter on a terminal: nothing drawn before the question (%s)", (mode) => {
  const s = useInProcessSession(mode);

  beforeAll(async () => {
    const file = join(s.sandbox.root, "quiet.csv");
    await writeFile(file, "userName,department\nquiet1,Quiet\nquiet2,Quiet\n");
    const users = await s.run(["users", "import", file]);
    expect(users.exitCode, show(users)).toBe(0);
    const events = join(s.sandbox.root, "quiet.ndjson");
    const lines = ["Q-1", "Q-2"].map((code) => JSON.stringify({ code, name: code, startsAt: "2027-05-01T10:00:00Z" }));
    await writeFile(events, `${lines.join("\n")}\n`);
    const imported = await s.run(["events", "import", events]);
    expect(imported.exitCode, show(imported)).toBe(0);
  }, 120_000);

  // reading the selection is not long work: a bar ("2/2 resources") would stand before the question
  const noProgress = (stderr: string) => expect(stderr).not.toMatch(/\d+\/\d+ (resources|events)|\r/);
  const USERS = ["--filter", 'department eq "Quiet"'];
  const EVENTS = ["--filter", 'code sw "Q-"'];
  const SCENARIOS: Scenario[] = [
    { name: "users delete, refused without --yes", args: ["users", "delete", ...USERS, "--no-input"], wantExit: 2 },
    { name: "users disable, refused without --yes", args: ["users", "disable", ...USERS, "--no-input"], wantExit: 2 },
    { name: "events delete, refused without --yes", args: ["events", "delete", ...EVENTS, "--no-input"], wantExit: 2 },
    { name: "users delete --dry-run", args: ["users", "delete", ...USERS, "--dry-run"], wantExit: 0 },
    { name: "events delete --dry-run", args: ["events", "delete", ...EVENTS, "--dry-run"], wantExit: 0 },
    // the summary's record table: no failure is said, not a blank row
    {
      name: "users disable --yes",
      args: ["users", "disable", ...USERS, "--yes"],
      wantExit: 0,
      wantStdout: /^disabled +2\nfailed +0\nfailures +none\n$/m,
    },
    {
      name: "users delete --yes",
      args: ["users", "delete", ...USERS, "--yes"],
      wantExit: 0,
      wantStdout: /^deleted +2\nfailed +0\nfailures +none\n$/m,
    },
    {
      name: "users delete --yes, nothing left",
      args: ["users", "delete", ...USERS, "--yes"],
      wantExit: 0,
      wantStdout: /^failures +none\n$/m,
    },
    {
      name: "events delete --yes",
      args: ["events", "delete", ...EVENTS, "--yes"],
      wantExit: 0,
      wantStdout: /^deleted +2$/m,
    },
  ];
  it.each(SCENARIOS)("$name", async (scenario) => {
    await expectScenario(s, { ...scenario, tty: true, env: { NO_COLOR: "1" }, wantStderr: noProgress });
  });

  // the 11th name of a selection is not shown: an admin disabling itself among others is told so
  it.each([["--dry-run"], ["--no-input"]])(
    "users disable --filter %s that selects the caller says so",
    async (flag) => {
      const other = await s.run(["users", "create", "--user-name", `admin-${flag.slice(2)}`, "--role", "admin"]);
      expect(other.exitCode, show(other)).toBe(0);
      const result = await s.run(["users", "disable", "--filter", 'roles.value eq "admin"', flag], { tty: true });
      expect(result.stderr).toMatch(/\), your own account among them \(your sessions end at once, .*\)[?.]/);
      expect(json(await s.run(["users", "get", "admin", "--json"])).active).toBe(true);
    },
  );
});

describe("users delete --filter on a terminal", () => {
  const s = useInProcessSession("embedded");
  const GONE = 'department eq "Gone"';

  beforeAll(async () => {
    const file = join(s.sandbox.root, "gone.csv");
    await writeFile(file, "userName,department\ngone1,Gone\ngone2,Gone\nstays,Sales\n");
    const imported = await s.run(["users", "import", file]);
    expect(imported.exitCode, show(imported)).toBe(0);
  }, 120_000);

  const userNames = async () => {
    const listed = await s.run(["users", "list", "--filter", GONE, "--json"]);
    return json<{ userName: string }[]>(listed)
      .map((u) => u.userName)
      .sort();
  };

  // in this order: the answer "no" must leave both users for the answer "yes"
  it.each([
    { answer: "n", exitCode: 2, left: ["gone1", "gone2"] },
    { answer: "y", exitCode: 0, left: [] },
  ])("asks with the count and the names; '$answer' exits $exitCode", async ({ answer, exitCode, left }) => {
    const result = await inTerminal(
      s.sandbox.env,
      ["users", "delete", "--filter", GONE],
      [{ expect: "Delete 2 user(s) matching", send: answer }],
    );
    expect(result.error, result.output).toBeUndefined();
    expect(result.output).toMatch(/gone1 [\s\S]*gone2/);
    expect(result.output).not.toMatch(/\d+\/\d+ resources/);
    expect(result.exitCode, result.output).toBe(exitCode);
    expect(await userNames()).toEqual(left);
    expect(json(await s.run(["users", "get", "stays", "--json"])).userName).toBe("stays");
  });
});
