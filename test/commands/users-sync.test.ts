import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CliResult, errorOf, json, type Mode, type Storage, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";

/**
 * `users sync FILE --source NAME` (issue 44) on HR-shaped exports (a byte-order mark, CRLF,
 * accents, quoted commas): a second run changes nothing, one title edit changes one attribute of
 * one user, a leaver is deactivated and nothing else, a returner is reactivated, support staff
 * stay support, users of another source or made by hand are left alone, and a plan is carried
 * out exactly, or refused whole when a user in it changed since.
 */

// biome-ignore lint/suspicious/noExplicitAny: the tests assert the shape with expect()
type Json = any;
const HR = (name: string) => join(import.meta.dirname, "../fixtures/hr", name);

/** A PostgreSQL database of its own, dropped after the tests. */
async function postgres(): Promise<Storage> {
  const database = await createTestDatabase();
  return { args: ["--database", database.url], env: { BIZCTL_SECRET_KEY: TEST_SECRET_KEY }, drop: database.drop };
}

const SETUPS: { name: string; mode: Mode; storage?: () => Promise<Storage> }[] = [
  { name: "SQLite, embedded", mode: "embedded" },
  { name: "SQLite, remote", mode: "remote" },
  { name: "PostgreSQL, remote", mode: "remote", storage: postgres },
];

describe.each(SETUPS)("users sync ($name)", ({ mode, storage }) => {
  const s = useInProcessSession(mode, storage ? { storage } : {}, 60_000);

  const sync = (file: string, args: string[] = [], source = "hr") =>
    s.run(["users", "sync", file, "--source", source, "--json", ...args]);
  const ok = (result: CliResult) => {
    expect(result.exitCode, show(result)).toBe(0);
    return json<Json>(result);
  };

  /** Every user by userName, as the directory holds it now. */
  async function directory(): Promise<Map<string, Record<string, Json>>> {
    const listed = await s.run(["users", "list", "--all", "--json"]);
    expect(listed.exitCode, show(listed)).toBe(0);
    return new Map(json<Record<string, Json>[]>(listed).map((user) => [user.userName, user]));
  }
  /** The users whose version differs between two readings. */
  const written = (before: Map<string, Json>, after: Map<string, Json>) =>
    [...after.values()]
      .filter((user) => before.get(user.userName)?.meta.version !== user.meta.version)
      .map((user) => user.userName)
      .sort();

  it("creates, adopts support staff made by hand, leaves others alone; a second run changes nothing", async () => {
    const sam = await s.run(["users", "create", "--user-name", "sam.support@example.com", "--role", "support"]);
    expect(sam.exitCode, show(sam)).toBe(0);
    const other = await s.run(["users", "create", "--user-name", "hand.made@example.com"]);
    expect(other.exitCode, show(other)).toBe(0);
    const before = await directory();

    const first = ok(await sync(HR("sync-day1.csv")));
    expect(first).toMatchObject({ read: 6, created: 5, updated: 1, deactivated: 0, unchanged: 0, failed: 0 });
    const after = await directory();
    expect(after.get("zoe.angstrom@example.com")).toMatchObject({
      name: { givenName: "Zoë", familyName: "Ångström" },
      department: "Research, Development",
      manager: { displayName: "Ada Lovelace" },
      syncSource: "hr",
      active: true,
    });
    expect(after.get("ada.lovelace@example.com")?.title).toBe('Head of "Analytical" Engines');
    expect(after.get("sam.support@example.com")).toMatchObject({
      syncSource: "hr",
      title: "Support Lead",
      roles: [expect.objectContaining({ value: "support" })],
    });
    // made by hand and not listed: never touched
    expect(after.get("hand.made@example.com")).toEqual(before.get("hand.made@example.com"));
    expect(after.get(s.userName)).toEqual(before.get(s.userName));

    const second = ok(await sync(HR("sync-day1.csv")));
    expect(second).toMatchObject({ created: 0, updated: 0, deactivated: 0, deleted: 0, unchanged: 6, failed: 0 });
    expect(written(after, await directory())).toEqual([]);
  });

  it("one title edit: a plan of one attribute of one user, applied as planned", async () => {
    const before = await directory();
    const planFile = join(s.sandbox.root, "title.plan.json");
    const plan = ok(await sync(HR("sync-title-edit.csv"), ["--plan", planFile]));
    expect(plan).toMatchObject({ creates: [], deactivations: [], deletions: [], unchanged: 5 });
    expect(plan.updates).toEqual([
      expect.objectContaining({
        userName: "zoe.angstrom@example.com",
        changes: [{ attribute: "title", old: "Engineer", new: "Senior Engineer" }],
      }),
    ]);
    expect(JSON.parse(await readFile(planFile, "utf8"))).toEqual(plan);
    expect(written(before, await directory())).toEqual([]);

    const table = await s.run([
      "users",
      "sync",
      HR("sync-title-edit.csv"),
      "--source",
      "hr",
      "--plan",
      planFile,
      "-o",
      "table",
    ]);
    expect(table.exitCode, show(table)).toBe(0);
    expect(table.stderr).toContain(
      "Plan for source hr: 0 to create, 1 to update, 0 to deactivate, 0 to delete, 5 unchanged",
    );
    expect(table.stdout).toMatch(/update\s+zoe\.angstrom@example\.com.*title\s+Engineer\s+Senior Engineer/);

    const applied = ok(await sync(HR("sync-title-edit.csv"), ["--apply", planFile]));
    expect(applied).toMatchObject({ created: 0, updated: 1, deactivated: 0, deleted: 0, failed: 0 });
    const after = await directory();
    expect(written(before, after)).toEqual(["zoe.angstrom@example.com"]);
    const { meta: _a, title: newTitle, ...rest } = after.get("zoe.angstrom@example.com") as Json;
    const { meta: _b, title: oldTitle, ...restBefore } = before.get("zoe.angstrom@example.com") as Json;
    expect([oldTitle, newTitle]).toEqual(["Engineer", "Senior Engineer"]);
    expect(rest).toEqual(restBefore);
    ok(await sync(HR("sync-day1.csv")));
  });

  it("a leaver is deactivated and nothing else, its sessions ended; a rename changes the name; a returner comes back", async () => {
    const temporary = "amber lantern quiver 5531 fjord";
    const set = await s.run(["users", "set-password", "li.lei@example.com", "--password-stdin"], {
      input: `${temporary}\n`,
    });
    expect(set.exitCode, show(set)).toBe(0);
    const leaverEnv = await s.newConfig("li");
    const leaver = await s.login(leaverEnv, "li.lei@example.com", temporary, "copper meadow tangent 8142 raven");
    expect(leaver.exitCode, show(leaver)).toBe(0);
    // a member cannot take itself out of the sync (and so escape a leaver's deactivation)
    const selfRemoval = await s.run(["users", "update", "li.lei@example.com", "--set", "syncSource=mine"], {
      env: leaverEnv,
    });
    expect(selfRemoval.exitCode, show(selfRemoval)).toBe(5);
    expect((await directory()).get("li.lei@example.com")?.openSessions).toBeGreaterThan(0);
    const before = await directory();
    const day2 = ok(await sync(HR("sync-day2-leaver-rename.csv")));
    expect(day2).toMatchObject({ created: 0, updated: 1, deactivated: 1, deleted: 0, unchanged: 4, failed: 0 });
    const after = await directory();
    expect(written(before, after)).toEqual(["jose.nunez@example.com", "li.lei@example.com"]);
    expect(after.get("li.lei@example.com")).toMatchObject({
      active: false,
      title: "Intern",
      syncSource: "hr",
      openSessions: 0,
    });
    expect(after.get("jose.nunez@example.com")?.name).toEqual({ givenName: "José", familyName: "Núñez García" });

    const day3 = ok(await sync(HR("sync-day3-returner.csv")));
    expect(day3).toMatchObject({ created: 0, updated: 1, deactivated: 0, unchanged: 5 });
    const back = await directory();
    expect(written(after, back)).toEqual(["li.lei@example.com"]);
    expect(back.get("li.lei@example.com")?.active).toBe(true);
    // the name back as it was, for the tests below
    expect(ok(await sync(HR("sync-day1.csv")))).toMatchObject({ updated: 1, unchanged: 5 });
  });

  it("--apply refuses a plan whose users changed since, changing nothing", async () => {
    const planFile = join(s.sandbox.root, "stale.plan.json");
    const plan = ok(await sync(HR("sync-title-edit.csv"), ["--plan", planFile]));
    expect(plan.updates).toHaveLength(1);
    const edit = await s.run(["users", "update", "zoe.angstrom@example.com", "--set", "nickName=Zo"]);
    expect(edit.exitCode, show(edit)).toBe(0);
    const before = await directory();
    const refused = await sync(HR("sync-title-edit.csv"), ["--apply", planFile]);
    expect(refused.exitCode, show(refused)).toBe(6);
    expect(errorOf(refused).message).toMatch(/1 user\(s\) of the plan changed since.*zoe\.angstrom/);
    expect(written(before, await directory())).toEqual([]);
    // another file than the plan's
    const other = await sync(HR("sync-day1.csv"), ["--apply", planFile]);
    expect(other.exitCode, show(other)).toBe(2);
  });

  it("never touches a user of another source, and keeps NDJSON and JSON sources apart", async () => {
    ok(await sync(HR("sync-day1.ndjson"), [], "payroll"));
    ok(await sync(HR("sync-day1.json"), [], "contractors"));
    const before = await directory();
    expect(before.get("nd.two@example.com")).toMatchObject({ department: "Sales, EMEA", syncSource: "payroll" });
    expect(before.get("js.one@example.com")).toMatchObject({ title: "Clerk", syncSource: "contractors" });
    // hr's file naming a payroll user: that line fails, the user is left alone
    const file = join(s.sandbox.root, "claims.csv");
    const hr = await readFile(HR("sync-day1.csv"), "utf8");
    await writeFile(file, `${hr}Nd,Two,nd.two@example.com,Finance,Boss,\r\n`);
    const result = await sync(file);
    expect(result.exitCode, show(result)).toBe(6);
    expect(json<Json>(result).failures).toEqual([
      expect.objectContaining({ line: 8, userName: "nd.two@example.com", problem: "conflict" }),
    ]);
    expect(written(before, await directory())).toEqual([]);
    // the payroll file without nd.two: only its own user is deactivated
    const payroll = join(s.sandbox.root, "payroll.ndjson");
    await writeFile(payroll, `${(await readFile(HR("sync-day1.ndjson"), "utf8")).split("\n")[0]}\n`);
    expect(ok(await sync(payroll, [], "payroll"))).toMatchObject({ deactivated: 1, unchanged: 1 });
    expect(written(before, await directory())).toEqual(["nd.two@example.com"]);
  });

  it("--delete-missing-after deletes a deactivated leaver once its days are past", async () => {
    const payroll = join(s.sandbox.root, "payroll-empty-but-one.ndjson");
    await writeFile(payroll, '{"userName":"nd.one@example.com"}\n');
    const kept = ok(await sync(payroll, ["--delete-missing-after", "30"], "payroll"));
    expect(kept).toMatchObject({ deleted: 0, deactivated: 0 });
    const removed = ok(await sync(payroll, ["--delete-missing-after", "0"], "payroll"));
    expect(removed).toMatchObject({ deleted: 1, deactivated: 0 });
    expect((await directory()).has("nd.two@example.com")).toBe(false);
  });

  it("on a terminal, progress bars with their totals: the directory read, then the changes", async () => {
    for (const file of ["sync-title-edit.csv", "sync-day1.csv"]) {
      const result = await s.run(["users", "sync", HR(file), "--source", "hr"], { tty: true, env: { NO_COLOR: "1" } });
      expect(result.exitCode, show(result)).toBe(0);
      expect(result.stderr).toMatch(/\[#{30}\] (\d+)\/\1 users read/);
      expect(result.stderr).toMatch(/\[#{30}\] 1\/1 changes/);
      expect(result.stderr).toContain("Synced source hr: 0 created, 1 updated, 0 deactivated, 0 deleted");
    }
  });

  it("a revoked token exits 4 and changes nothing", async () => {
    const created = await s.run(["auth", "tokens", "create", "--name", "sync", "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
    const token = json<{ id: string; token: string }>(created);
    expect((await s.run(["auth", "tokens", "revoke", token.id, "--yes"])).exitCode).toBe(0);
    const before = await directory();
    const result = await s.run(["users", "sync", HR("sync-title-edit.csv"), "--source", "hr"], {
      env: { BIZCTL_TOKEN: token.token },
    });
    expect(result.exitCode, show(result)).toBe(4);
    expect(JSON.parse(result.stderr.trim()).error).toMatchObject({ code: "token_revoked", exitCode: 4 });
    expect(written(before, await directory())).toEqual([]);
  });

  it("reads a directory of several pages whole: a second sync of 1,201 users changes nothing", async () => {
    const file = join(s.sandbox.root, "many.csv");
    const rows = Array.from({ length: 1_201 }, (_, i) => `many.${i}@example.com,Many,${i},Staff\n`);
    await writeFile(file, `E-mail,First Name,Last Name,Title\n${rows.join("")}`);
    expect(ok(await sync(file, [], "many"))).toMatchObject({ created: 1_201, failed: 0 });
    // the plan reads every User, three pages of 500 and more: none missed, none read twice
    expect(ok(await sync(file, [], "many"))).toMatchObject({ created: 0, updated: 0, unchanged: 1_201, failed: 0 });
  }, 120_000);

  it("refuses a bad --source or --plan with --apply (exit 2)", async () => {
    for (const args of [
      ["users", "sync", HR("sync-day1.csv"), "--source", "no spaces"],
      ["users", "sync", HR("sync-day1.csv"), "--source", "hr", "--plan", "a.json", "--apply", "b.json"],
    ]) {
      const result = await s.run(args);
      expect(result.exitCode, show(result)).toBe(2);
    }
  });
});
