import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import argon2 from "argon2";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN,
  type CliResult,
  type Env,
  errorOf,
  type ImportFileScenario,
  json,
  login,
  MODES,
  makeSandbox,
  PASSWORD,
  type RunningServer,
  type Sandbox,
  type Session,
  show,
  startServer,
  transcript,
} from "../helpers/cli.js";
import { type InProcessSession, inProcessSession, runInProcess } from "../helpers/in-process.js";
import { outboxReader, recipientsOf, type SmtpSink, startSmtpSink } from "../helpers/mail.js";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";

/**
 * `users import` and `users export` through the commands, in this process (servers are real
 * processes): CSV as spreadsheets write it, NDJSON,
 * bad lines reported by line number, password hashes from other systems (made by independent
 * tools) that log in and become argon2id, and invitations that reach a real SMTP server.
 */

// biome-ignore lint/suspicious/noExplicitAny: the tests assert the shape with expect()
type Json = any;
type Failure = { line: number; userName?: string; problem: string; message: string };
type Summary = {
  read: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
  invited?: number;
  failures: Failure[];
};

async function importFile(run: Session["run"], dir: string, name: string, content: string, args: string[] = []) {
  const file = join(dir, name);
  await writeFile(file, content);
  return run(["users", "import", file, "--json", ...args]);
}

const summaryOf = (result: CliResult): Summary => json<Summary>(result);
const ok = (result: CliResult): CliResult => {
  expect(result.exitCode, show(result)).toBe(0);
  return result;
};
const failuresOf = (result: CliResult): Failure[] => (result.stdout.trim() ? summaryOf(result).failures : []);

describe.each(MODES)("users import and export (%s)", (mode) => {
  let s: InProcessSession;

  async function userNamed(userName: string): Promise<Record<string, Json> | undefined> {
    const found = await s.run(["users", "list", "--filter", `userName eq "${userName}"`, "--json"]);
    expect(found.exitCode, show(found)).toBe(0);
    return json<Record<string, Json>[]>(found)[0];
  }

  beforeAll(async () => {
    s = await inProcessSession(mode);
  }, 60_000);
  afterAll(async () => s?.close());

  const BOM = "\uFEFF";
  const scenarios: (ImportFileScenario & {
    imported: string[];
    failures: [number, string][];
    message?: RegExp;
  })[] = [
    {
      name: "CSV with a byte-order mark, quoted commas and newlines, UTF-8 names, enterprise prefix",
      file: "people.csv",
      content: `${BOM}userName,name.givenName,name.familyName,emails[0].value,emails[0].type,roles,active,urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department,title\r\nzoë.ångström,Zoë,"Ångström, Jr.",zoe@example.com,work,member;support,true,R&D,"Head of ""Things""\r\nand more"\r\n李雷,雷,李,lilei@example.com,,member,false,,\r\n`,
      exit: 0,
      imported: ["zoë.ångström", "李雷"],
      failures: [],
    },
    {
      name: "a malformed line and a bad value among good ones",
      file: "mixed.csv",
      content: 'userName,emails[0].value,active\ngood1,g1@example.com,true\n"bad1,b@example.com\n',
      exit: 7,
      imported: ["good1"],
      failures: [[3, "invalid_line"]],
    },
    {
      name: "lines of the wrong width, a boolean that is not one, an address that is not one",
      file: "bad-lines.csv",
      content:
        "userName,emails[0].value,active\ngood2,g2@example.com,true\nx,y\nbad2,b2@example.com,perhaps\nbad3,not-an-address,true\ngood3,,\n",
      exit: 1,
      imported: ["good2", "good3"],
      failures: [
        [3, "invalid_line"],
        [4, "invalid_line"],
        [5, "validation_failed"],
      ],
    },
    {
      name: "every line bad",
      file: "all-bad.csv",
      content: "userName,active\nnone1,maybe\nnone2\nnone3,a,b\n",
      exit: 7,
      imported: [],
      failures: [
        [2, "invalid_line"],
        [3, "invalid_line"],
        [4, "invalid_line"],
      ],
    },
    {
      name: "the same userName twice in one file",
      file: "twice.csv",
      content: "userName\ntwin\nTWIN\n",
      exit: 6,
      imported: ["twin"],
      failures: [[3, "conflict"]],
    },
    {
      name: "--map renames the columns of another system",
      file: "other-system.csv",
      content: "login,mail,first,last\nmapped1,m1@example.com,Ada,Lovelace\n",
      args: [
        "--map",
        "login=userName",
        "--map",
        "mail=emails[0].value",
        "--map",
        "first=name.givenName",
        "--map",
        "last=name.familyName",
      ],
      exit: 0,
      imported: ["mapped1"],
      failures: [],
    },
    {
      name: "NDJSON with a line that is not JSON and one with a password in clear",
      file: "people.ndjson",
      content:
        '{"userName":"nd1","name":{"givenName":"Nd"}}\n{"userName": nd2}\n\n{"userName":"nd3","password":"hunter2 hunter2"}\n{"userName":"nd4"}\n',
      exit: 7,
      imported: ["nd1", "nd4"],
      failures: [
        [2, "invalid_line"],
        [4, "invalid_line"],
      ],
    },
    {
      name: "a line too large for any request: that line fails, the others are imported",
      file: "huge.csv",
      content: `userName,displayName\nbefore-huge,x\nhuge,${"x".repeat(1100 * 1024)}\nafter-huge,y\n`,
      exit: 1,
      imported: ["before-huge", "after-huge"],
      failures: [[3, "payload_too_large"]],
    },
    // issue 32: an empty file exited 2, so `users export --filter … | users import -` failed CI
    ...[
      ["an empty file", "empty.csv", ""],
      ["an empty NDJSON file", "empty.ndjson", ""],
      ["a file of blank lines", "blank.csv", "\n\n  \n"],
      ["a byte-order mark alone", "bom.csv", BOM],
    ].map(([name, file, content]) => ({
      name: `${name}: nothing to import, exit 0`,
      file: file as string,
      content: content as string,
      exit: 0,
      imported: [],
      failures: [],
    })),
    {
      name: "a header and no users",
      file: "header-only.csv",
      content: "userName,emails[0].value\n",
      exit: 0,
      imported: [],
      failures: [],
    },
    {
      name: "a column of passwords in clear: nothing is read",
      file: "clear.csv",
      content: "userName,password\nclear1,correct horse battery staple 9\n",
      exit: 2,
      imported: [],
      failures: [],
      message: /never reads a password in clear/,
    },
    {
      name: "a column that is no User attribute: nothing is read",
      file: "unknown.csv",
      content: "userName,shoeSize\nunknown1,44\n",
      exit: 2,
      imported: [],
      failures: [],
      message: /'shoeSize' is not a User attribute/,
    },
  ];

  it.each(scenarios)("$name", async (scenario) => {
    const result = await importFile(s.run, s.sandbox.root, scenario.file, scenario.content, scenario.args);
    expect(result.exitCode, show(result)).toBe(scenario.exit);
    if (scenario.message) expect(errorOf(result).message).toMatch(scenario.message);
    expect(failuresOf(result).map((f) => [f.line, f.problem])).toEqual(scenario.failures);
    for (const userName of scenario.imported) expect(await userNamed(userName), userName).toBeDefined();
    if (!scenario.message) {
      expect(summaryOf(result)).toMatchObject({
        created: scenario.imported.length,
        updated: 0,
        skipped: 0,
        failed: scenario.failures.length,
      });
    }
  });

  it("reads the CSV's names, quotes and types as written", async () => {
    const zoe = await userNamed("zoë.ångström");
    expect(zoe).toMatchObject({
      name: { givenName: "Zoë", familyName: "Ångström, Jr." },
      emails: [{ value: "zoe@example.com", type: "work" }],
      roles: [
        { value: "member", primary: true },
        { value: "support", primary: false },
      ],
      active: true,
      department: "R&D",
      title: 'Head of "Things"\r\nand more',
      firstLogin: true,
    });
    expect((await userNamed("李雷"))?.active).toBe(false);
  });

  it("exports in the format it imports, without any secret; the export read back conflicts on every line", async () => {
    const csv = await s.run(["users", "export", "-o", "csv"]);
    expect(csv.exitCode, show(csv)).toBe(0);
    const [header] = csv.stdout.split("\n");
    expect(header).toMatch(/^userName,externalId,displayName,name\.givenName,/);
    expect(csv.stdout).toContain('zoë.ångström,,,Zoë,,"Ångström, Jr."');
    expect(csv.stdout).toContain("member;support");
    const ndjson = await s.run(["users", "export", "-o", "ndjson"]);
    const users = ndjson.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    // admin and the users the scenarios above imported
    expect(users.length).toBe(12);
    for (const user of users) {
      for (const hidden of ["id", "meta", "passwordHash", "password", "firstLogin", "locked", "schemas"]) {
        expect(user, hidden).not.toHaveProperty(hidden);
      }
    }
    const again = await importFile(s.run, s.sandbox.root, "again.csv", csv.stdout);
    expect(again.exitCode, show(again)).toBe(6);
    expect(new Set(failuresOf(again).map((f) => f.problem))).toEqual(new Set(["conflict"]));
    expect(failuresOf(again).length).toBe(users.length);
  });

  // issue 32: users import printed a list of failures, events import an object of counts
  it("prints the one import summary of events import, in JSON and as a line on stderr", async () => {
    const users = await importFile(s.run, s.sandbox.root, "shape.csv", "userName\nshape1\nshape1\n");
    const eventsFile = join(s.sandbox.root, "shape.ndjson");
    await writeFile(
      eventsFile,
      '{"code":"SHAPE","name":"S","startsAt":"2027-01-01T00:00:00Z"}\n{"code":"SHAPE","name":"S","startsAt":"2027-01-01T00:00:00Z"}\n',
    );
    const events = await s.run(["events", "import", eventsFile, "--json"]);
    for (const result of [users, events]) {
      expect(result.exitCode, show(result)).toBe(6);
      expect(json(result)).toMatchObject({ read: 2, created: 1, updated: 0, skipped: 0, failed: 1 });
      expect(json(result).failures).toEqual([
        expect.objectContaining({
          line: 3 - (result === events ? 1 : 0),
          problem: "conflict",
          message: expect.any(String),
        }),
      ]);
    }
    expect(Object.keys(json(users)).sort()).toEqual(Object.keys(json(events)).sort());
    await writeFile(join(s.sandbox.root, "shape2.csv"), "userName\nshape2\n");
    const line = await s.run(["users", "import", join(s.sandbox.root, "shape2.csv"), "-o", "table"]);
    expect(line.exitCode, show(line)).toBe(0);
    expect(line.stderr).toContain("Imported: 1 created, 0 updated, 0 skipped, 0 failed, of 1 read.");
  });

  // issue 32: users import had no --on-conflict, so the second run of a CI script failed
  const POLICIES: { policy: string[]; exit: number; counts: Partial<Summary>; problems: string[]; title: string }[] = [
    { policy: [], exit: 6, counts: { created: 1, failed: 2 }, problems: ["conflict", "conflict"], title: "Old" },
    {
      policy: ["--on-conflict", "fail"],
      exit: 6,
      counts: { created: 1, failed: 2 },
      problems: ["conflict", "conflict"],
      title: "Old",
    },
    { policy: ["--on-conflict", "skip"], exit: 0, counts: { created: 1, skipped: 2 }, problems: [], title: "Old" },
    { policy: ["--on-conflict", "update"], exit: 0, counts: { created: 1, updated: 2 }, problems: [], title: "New" },
  ];
  it.each(POLICIES)("a second run with $policy: $counts", async ({ policy, exit, counts, problems, title }) => {
    const tag = `oc${POLICIES.findIndex((p) => p.policy === policy)}`;
    const first = `userName,title\n${tag}-a,Old\n${tag}-b,Old\n`;
    ok(await importFile(s.run, s.sandbox.root, `${tag}-1.csv`, first));
    const second = `userName,title\n${tag}-a,New\n${tag.toUpperCase()}-B,New\n${tag}-c,New\n`;
    const result = await importFile(s.run, s.sandbox.root, `${tag}-2.csv`, second, policy);
    expect(result.exitCode, show(result)).toBe(exit);
    expect(summaryOf(result)).toMatchObject({ read: 3, created: 0, updated: 0, skipped: 0, failed: 0, ...counts });
    expect(failuresOf(result).map((f) => f.problem)).toEqual(problems);
    expect((await userNamed(`${tag}-a`))?.title).toBe(title);
    expect((await userNamed(`${tag}-b`))?.title).toBe(title);
    expect((await userNamed(`${tag}-c`))?.title).toBe("New");
  });

  it("--on-conflict is fail, skip or update", async () => {
    const result = await importFile(s.run, s.sandbox.root, "oc-bad.csv", "userName\nocbad\n", [
      "--on-conflict",
      "merge",
    ]);
    expect(result.exitCode, show(result)).toBe(2);
    expect(await userNamed("ocbad")).toBeUndefined();
  });

  // issue 32: a CSV as HR systems export it stopped at once ("'email' is not a User attribute")
  const HEADERS: { name: string; header: string; args?: string[]; told: boolean }[] = [
    { name: "as HR systems export it, piped", header: "userName,email,givenName,familyName,role", told: false },
    { name: "with --verbose", header: "userName,Email,firstName,lastName,roles", args: ["--verbose"], told: true },
    { name: "snake case", header: "username,e-mail,first_name,last_name,role", told: false },
    { name: "with spaces", header: "User Name,Email Address,First Name,Last Name,Role", told: false },
  ];
  it.each(HEADERS)("reads common header spellings: $name", async ({ header, args = [], told }) => {
    const tag = `hdr${HEADERS.findIndex((h) => h.header === header)}`;
    const csv = `${header}\n${tag},${tag}@example.com,Grace,Hopper,support\n`;
    const result = await importFile(s.run, s.sandbox.root, `${tag}.csv`, csv, args);
    expect(result.exitCode, show(result)).toBe(0);
    expect(summaryOf(result)).toMatchObject({ created: 1, failed: 0 });
    expect(await userNamed(tag)).toMatchObject({
      emails: [{ value: `${tag}@example.com` }],
      name: { givenName: "Grace", familyName: "Hopper" },
      roles: [{ value: "support" }],
    });
    if (told) expect(result.stderr).toMatch(/Columns read as: .*Email → emails\[0\]\.value/);
    else expect(result.stderr).not.toMatch(/Columns read as/);
  });

  it("on a terminal, stderr says which column became what", async () => {
    const file = join(s.sandbox.root, "hdr-tty.csv");
    await writeFile(file, "userName,email,externalId\nhdrtty,hdrtty@example.com,E-77\n");
    const result = await s.run(["users", "import", file], { tty: true, env: { NO_COLOR: "1" } });
    expect(result.exitCode, show(result)).toBe(0);
    expect(result.stderr).toContain("Columns read as: email → emails[0].value.");
    expect(await userNamed("hdrtty")).toMatchObject({ externalId: "E-77", emails: [{ value: "hdrtty@example.com" }] });
  });

  it("an empty stdin imports nothing, says so and exits 0 with a zero summary", async () => {
    const result = await s.run(["users", "import", "-", "--json"], { input: "" });
    expect(result.exitCode, show(result)).toBe(0);
    expect(result.stderr).toContain("stdin holds no users: nothing to import.");
    expect(json(result)).toEqual({ read: 0, created: 0, updated: 0, skipped: 0, failed: 0, failures: [] });
  });
});

// ---------------------------------------------------------------------------------------------
// password hashes of another system, on each store

const OLD_PASSWORD = "tangerine bicycle ladder 8812";

/** Hashes as other systems make them: Apache's htpasswd, Python's bcrypt, argon2id with other parameters. */
function foreignHashes(): { tool: string; hash: string }[] {
  const htpasswd = execFileSync("htpasswd", ["-bnBC", "10", "", OLD_PASSWORD], { encoding: "utf8" })
    .trim()
    .replace(/^:/, "");
  const python = execFileSync(
    "/usr/bin/python3",
    ["-c", "import bcrypt,sys; print(bcrypt.hashpw(sys.argv[1].encode(), bcrypt.gensalt(12)).decode())", OLD_PASSWORD],
    { encoding: "utf8" },
  ).trim();
  return [
    { tool: "htpasswd -B", hash: htpasswd },
    { tool: "python3-bcrypt", hash: python },
  ];
}

interface Installation {
  sandbox: Sandbox;
  env: Env;
  server?: RunningServer;
  passwordHash(userName: string): Promise<string | null>;
  close(): Promise<void>;
}

type Store = "SQLite, embedded" | "SQLite, remote" | "PostgreSQL, remote";
const STORES: Store[] = ["SQLite, embedded", "SQLite, remote", "PostgreSQL, remote"];

async function install(store: Store, serverArgs: string[] = []): Promise<Installation> {
  const sandbox = await makeSandbox();
  const database = store.startsWith("PostgreSQL") ? await createTestDatabase() : undefined;
  const storage = database ? ["--database", database.url] : [];
  const env = database ? { ...sandbox.env, BIZCTL_SECRET_KEY: TEST_SECRET_KEY } : sandbox.env;
  const init = await runInProcess(["server", "init", "--admin-user", ADMIN, "--password-stdin", ...storage], {
    env,
    input: `${PASSWORD}\n`,
  });
  if (init.exitCode !== 0) throw new Error(show(init));
  const server = store.endsWith("remote")
    ? await startServer(sandbox.dataDir, { env, args: [...storage, ...serverArgs] })
    : undefined;
  if (server) {
    const added = await runInProcess(["profile", "add", "r", "--server", server.url, "--use"], { env });
    if (added.exitCode !== 0) throw new Error(show(added));
  }
  const logged = await login(env, ADMIN, PASSWORD, undefined, runInProcess);
  if (logged.exitCode !== 0) throw new Error(show(logged));
  const query =
    "select c.password_hash as h from credentials c join resources r on r.id = c.user_id where r.user_name_key = $1";
  return {
    sandbox,
    env,
    server,
    async passwordHash(userName) {
      if (database) {
        const client = new pg.Client(database.url);
        await client.connect();
        try {
          return (await client.query(query, [userName.toLowerCase()])).rows[0]?.h ?? null;
        } finally {
          await client.end();
        }
      }
      const db = new Database(join(sandbox.dataDir, "bizctl.db"), { readonly: true });
      try {
        const row = db.prepare(query.replace("$1", "?")).get(userName.toLowerCase()) as
          | { h: string | null }
          | undefined;
        return row?.h ?? null;
      } finally {
        db.close();
      }
    },
    async close() {
      await server?.stop();
      await database?.drop();
      await sandbox.remove();
    },
  };
}

describe.each(STORES)("imported password hashes (%s)", (store) => {
  let inst: Installation;
  const hashes = foreignHashes();
  const ours = argon2.hash(OLD_PASSWORD, { type: argon2.argon2id, memoryCost: 8192, timeCost: 3, parallelism: 2 });
  let rows: { userName: string; tool: string; hash: string }[];

  beforeAll(async () => {
    inst = await install(store);
    rows = [
      ...hashes.map((h, i) => ({ userName: `migrated${i}`, ...h })),
      { userName: "migrated-argon", tool: "argon2id, other parameters", hash: await ours },
    ];
    const csv = `userName,emails[0].value,passwordHash\n${rows.map((r) => `${r.userName},${r.userName}@example.com,"${r.hash}"`).join("\n")}\nclear,clear@example.com,${OLD_PASSWORD}\n`;
    const run = (args: string[]) => runInProcess(args, { env: inst.env });
    const result = await importFile(run, inst.sandbox.root, "migrated.csv", csv);
    expect(result.exitCode, show(result)).toBe(7);
    const [failure] = failuresOf(result);
    expect([failure?.line, failure?.problem, failure?.userName]).toEqual([5, "validation_failed", "clear"]);
    expect(failure?.message).toMatch(/password in clear is never accepted/);
  }, 120_000);
  afterAll(async () => inst?.close());

  it.each([0, 1, 2])(
    "hash #%i: the old password logs in, a wrong one does not, and the stored hash becomes argon2id",
    async (index) => {
      const { userName, hash, tool } = rows[index]!;
      expect(await inst.passwordHash(userName), tool).toBe(hash);
      const userEnv = { ...inst.env, BIZCTL_CONFIG_DIR: join(inst.sandbox.root, `cfg-${userName}`) };
      if (inst.server) {
        const added = await runInProcess(["profile", "add", "r", "--server", inst.server.url, "--use"], {
          env: userEnv,
        });
        expect(added.exitCode).toBe(0);
      }
      const wrong = await login(userEnv, userName, `${OLD_PASSWORD}x`, undefined, runInProcess);
      expect(wrong.exitCode, show(wrong)).toBe(4);
      expect(await inst.passwordHash(userName), "a failed login leaves the hash").toBe(hash);
      const right = await login(userEnv, userName, OLD_PASSWORD, undefined, runInProcess);
      expect(right.exitCode, `${tool}: ${show(right)}`).toBe(0);
      // the password is the user's own: no change is asked
      expect(right.stderr).not.toMatch(/must change/i);
      const stored = await inst.passwordHash(userName);
      expect(stored, tool).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
      expect(await argon2.verify(stored!, OLD_PASSWORD)).toBe(true);
      const again = await login(userEnv, userName, OLD_PASSWORD, undefined, runInProcess);
      expect(again.exitCode, show(again)).toBe(0);
    },
  );

  it("never returns, exports or logs the hash, and refuses it on PUT", async () => {
    const run = (args: string[], input?: string) => runInProcess(args, { env: inst.env, ...(input && { input }) });
    const got = await run(["users", "get", "migrated0", "--json"]);
    expect(got.exitCode).toBe(0);
    expect(json(got)).not.toHaveProperty("passwordHash");
    const exported = await run(["users", "export", "-o", "ndjson"]);
    expect(exported.stdout).not.toContain("$2");
    expect(exported.stdout).not.toMatch(/passwordHash/);
    const put = await run(["users", "update", "migrated1", "--set", `passwordHash=${rows[0]!.hash}`]);
    expect(put.exitCode, show(put)).toBe(7);
    expect(errorOf(put).message).toMatch(/only when a user is created/);
    for (const { hash } of rows) {
      const leaked = transcript.filter((t) => t.text.includes(hash) && !t.what.includes("import"));
      expect(leaked.map((t) => t.what)).toEqual([]);
      expect(inst.server?.logs() ?? "").not.toContain(hash.slice(7));
    }
  });
});

// ---------------------------------------------------------------------------------------------
// invitations

describe.each(STORES)("users import --invite (%s)", (store) => {
  let inst: Installation;
  let smtp: SmtpSink | undefined;

  beforeAll(async () => {
    smtp = store.endsWith("remote") ? await startSmtpSink() : undefined;
    inst = await install(store, smtp ? ["--smtp-url", smtp.url] : []);
  }, 120_000);
  afterAll(async () => {
    await inst?.close();
    await smtp?.close();
  });

  it("mails each new user an invitation; a user without an address is that line's validation failure", async () => {
    // a user who brings its password hash has a password: it is not invited
    const [{ hash }] = foreignHashes();
    const csv = `userName,emails[0].value,passwordHash\ninv1,inv1@example.com,\ninv2,inv2@example.com,\nnomail,,\ninv3,inv3@example.com,\nhashed,hashed@example.com,${hash}\n`;
    const run = (args: string[]) => runInProcess(args, { env: inst.env });
    const result = await importFile(run, inst.sandbox.root, "invite.csv", csv, ["--invite", "--batch-size", "4"]);
    // issue 32: it was created, reported as a conflict and the import exited 6
    expect(result.exitCode, show(result)).toBe(7);
    expect(summaryOf(result)).toMatchObject({ read: 5, created: 4, invited: 3, failed: 1 });
    expect(failuresOf(result).map((f) => [f.line, f.userName, f.problem])).toEqual([
      [4, "nomail", "validation_failed"],
    ]);
    expect(failuresOf(result)[0]?.message).toMatch(/no e-mail address/);
    expect(json(await run(["users", "list", "--filter", 'userName eq "nomail"', "--json"]))).toEqual([]);
    const expected = ["inv1@example.com", "inv2@example.com", "inv3@example.com"];
    let received: string[];
    if (smtp) {
      for (const to of expected) await smtp.waitFor((mail) => mail.rcptTo.includes(to), 20_000);
      received = smtp.messages.filter((m) => /invited/.test(m.subject ?? "")).flatMap((m) => m.rcptTo);
    } else {
      const mails = await outboxReader(inst.sandbox.dataDir).take();
      expect(mails.every((m) => /invited/.test(m.subject ?? ""))).toBe(true);
      received = mails.flatMap(recipientsOf);
    }
    expect(received.sort()).toEqual(expected);
    const listed = json(await run(["users", "list", "--filter", "invited eq true", "--json"]));
    expect(listed.map((u: { userName: string }) => u.userName).sort()).toEqual(["inv1", "inv2", "inv3"]);
  });
});
