import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CliResult, errorOf, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

/**
 * `users import` as a nightly HR script runs it (issue 44): --on-conflict update merges the
 * file's columns into each user and writes nothing for a user it leaves as it is; --dry-run
 * reports the same summary and changes nothing; HR headers read as attributes, a column mapped
 * twice is refused; a revoked token exits 4 and claims nothing.
 */

// biome-ignore lint/suspicious/noExplicitAny: the tests assert the shape with expect()
type Json = any;
const FIXTURE = join(import.meta.dirname, "../fixtures/hr/people.csv");

describe.each(MODES)("users import merges and dry-runs (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let files = 0;

  async function importText(content: string, args: string[] = []): Promise<CliResult> {
    const file = join(s.sandbox.root, `merge-${++files}.${content.startsWith("{") ? "ndjson" : "csv"}`);
    await writeFile(file, content);
    return s.run(["users", "import", file, "--json", ...args]);
  }

  async function user(userName: string): Promise<Record<string, Json> | undefined> {
    const found = await s.run(["users", "list", "--filter", `userName eq "${userName}"`, "--json"]);
    expect(found.exitCode, show(found)).toBe(0);
    return json<Record<string, Json>[]>(found)[0];
  }

  it("reads an HR export's headers, and takes the e-mail as userName", async () => {
    const result = await s.run(["users", "import", FIXTURE, "--json"]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(json(result)).toMatchObject({ read: 4, created: 4, failed: 0 });
    expect(await user("zoe.angstrom@example.com")).toMatchObject({
      name: { givenName: "Zoë", familyName: "Ångström" },
      emails: [{ value: "zoe.angstrom@example.com" }],
      department: "Research, Development",
      title: "Engineer",
      manager: { displayName: "Ada Lovelace" },
      active: true,
      displayName: "Ångström, Zoë",
      phoneNumbers: [{ value: "+46 8 123 45" }],
    });
    expect((await user("ada.lovelace@example.com"))?.title).toBe('Head of "Analytical" Engines');
  });

  it("--on-conflict update merges: roles, phones and titles the file lacks stay; unchanged users get no write", async () => {
    const seeded = await importText(
      [
        '{"userName":"mg-support","title":"Agent","department":"Support","roles":[{"value":"support"}],"phoneNumbers":[{"value":"+1 555 0100","type":"work"}],"emails":[{"value":"mg-support@example.com","type":"work","primary":true}]}',
        '{"userName":"mg-same","title":"Clerk","department":"Sales"}',
        '{"userName":"mg-title","title":"Clerk","department":"Sales","nickName":"T"}',
      ].join("\n"),
    );
    expect(seeded.exitCode, show(seeded)).toBe(0);
    const before = {
      support: await user("mg-support"),
      same: await user("mg-same"),
      title: await user("mg-title"),
    };
    const csv =
      "User Name,E-mail,Department\nmg-support,mg-support@example.com,Support Desk\nmg-same,,Sales\nMG-TITLE,,Sales\n";
    const dry = await importText(csv, ["--on-conflict", "update", "--dry-run"]);
    expect(dry.exitCode, show(dry)).toBe(0);
    expect(json(dry)).toMatchObject({ read: 3, created: 0, updated: 1, unchanged: 2, failed: 0 });
    expect(await user("mg-support")).toEqual(before.support);

    const result = await importText(csv, ["--on-conflict", "update"]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(json(result)).toMatchObject({ read: 3, created: 0, updated: 1, unchanged: 2, skipped: 0, failed: 0 });
    const support = await user("mg-support");
    expect(support).toMatchObject({
      department: "Support Desk",
      title: "Agent",
      roles: [expect.objectContaining({ value: "support" })],
      phoneNumbers: [{ value: "+1 555 0100", type: "work" }],
      emails: [{ value: "mg-support@example.com", type: "work", primary: true }],
    });
    expect(support?.meta.version).not.toBe(before.support?.meta.version);
    // no write: the same version and lastModified
    expect(await user("mg-same")).toEqual(before.same);
    expect(await user("mg-title")).toEqual(before.title);

    // run twice: nothing changes the second time
    const again = await importText(csv, ["--on-conflict", "update"]);
    expect(json(again)).toMatchObject({ updated: 0, unchanged: 3 });
    expect(await user("mg-support")).toEqual(support);
  });

  it("--dry-run creates nothing and reports what it would, bad lines by number", async () => {
    const result = await importText("userName,active\ndry-a,true\ndry-b,perhaps\ndry-a,false\n", ["--dry-run"]);
    expect(result.exitCode, show(result)).toBe(1);
    expect(json(result)).toMatchObject({ read: 3, created: 1, failed: 2 });
    expect(json(result).failures.map((f: Json) => [f.line, f.problem])).toEqual([
      [3, "invalid_line"],
      [4, "conflict"],
    ]);
    expect(errorOf(result).message).toMatch(/nothing was written/);
    expect(await user("dry-a")).toBeUndefined();
  });

  const REFUSED: { name: string; content: string; args: string[]; message: RegExp }[] = [
    {
      name: "one column mapped twice",
      content: "login,mail\ntw-a,tw-a@example.com\n",
      args: ["--map", "login=userName", "--map", "login=displayName"],
      message: /maps the column 'login' twice/,
    },
    {
      name: "two columns mapped to one attribute",
      content: "login,uid\ntw-b,tw-b\n",
      args: ["--map", "login=userName", "--map", "uid=userName"],
      message: /maps both 'login' and 'uid' to userName/,
    },
    {
      name: "a column mapped onto one the file has",
      content: "userName,login\ntw-c,tw-c\n",
      args: ["--map", "login=userName"],
      message: /'userName' and 'login' both read as userName/,
    },
    {
      name: "two spellings of one attribute",
      content: "userName,Title,Job Title\ntw-d,A,B\n",
      args: [],
      message: /'Title' and 'Job Title' both read as title/,
    },
  ];
  it.each(REFUSED)("refuses $name: exit 2, nothing imported", async ({ content, args, message }) => {
    const result = await importText(content, args);
    expect(result.exitCode, show(result)).toBe(2);
    expect(errorOf(result).message).toMatch(message);
    for (const name of ["tw-a", "tw-b", "tw-c", "tw-d"]) expect(await user(name)).toBeUndefined();
  });

  it("a revoked token exits 4, imports nothing and says so, as one JSON object on a piped stderr", async () => {
    const created = await s.run(["auth", "tokens", "create", "--name", "hr-sync", "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
    const token = json<{ id: string; token: string }>(created);
    const revoked = await s.run(["auth", "tokens", "revoke", token.id, "--yes"]);
    expect(revoked.exitCode, show(revoked)).toBe(0);
    const file = join(s.sandbox.root, "revoked.csv");
    await writeFile(file, "userName\nrv-a\nrv-b\n");
    const result = await s.run(["users", "import", file], { env: { BIZCTL_TOKEN: token.token } });
    expect(result.exitCode, show(result)).toBe(4);
    const error = JSON.parse(result.stderr.trim());
    expect(error.error).toMatchObject({ code: "token_revoked", exitCode: 4 });
    expect(error.error.message).toMatch(/nothing was imported/);
    expect(error.error.message).not.toMatch(/were imported/);
    expect(await user("rv-a")).toBeUndefined();
  });

  it("the fixture is an HR export: a byte-order mark, CRLF and quoted commas", async () => {
    const raw = await readFile(FIXTURE);
    expect([...raw.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(raw.toString("utf8")).toContain('"Research, Development"');
  });
});
