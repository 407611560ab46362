import { spawnSync } from "node:child_process";
import { cp, mkdir, readdir, readFile, rmdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiToken,
  bizctl,
  errorOf,
  json,
  type RunningServer,
  show,
  startServer,
  useServer,
  useSession,
} from "../helpers/cli.js";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";

/** `server backup FILE`: a consistent copy of SQLite taken while a server writes, and what it refuses. */

/**
 * Root writes into any directory, whatever its mode: run as root, the command runs without the
 * capability that overrides the file modes (CAP_DAC_OVERRIDE, dropped by util-linux's setpriv),
 * and so cannot write a directory of mode 0555 that it owns, as any other user could not. It
 * keeps the capability to read anywhere, so it reaches the binary wherever the clone is.
 */
const asRoot = process.getuid?.() === 0;
const canDropOverride = !asRoot || spawnSync("setpriv", ["--version"]).status === 0;
const unprivileged = asRoot ? ["setpriv", "--bounding-set=-dac_override"] : [];
const NO_SETPRIV = "it runs as root and setpriv (util-linux) is not installed";
if (!canDropOverride && !process.env.CI) console.warn(`the unwritable-directory backup test is skipped: ${NO_SETPRIV}`);

// events near the 16 KiB cap of customFields, so that the database spans hundreds of pages
const PADDING = "x".repeat(8_000);

async function createEvent(url: string, token: string, code: string): Promise<void> {
  const response = await fetch(`${url}/api/crm/v1/events/`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ code, name: code, startsAt: "2027-01-10T09:00:00Z", customFields: { pad: PADDING } }),
  });
  if (response.status !== 201) throw new Error(`POST ${code}: ${response.status} ${await response.text()}`);
}

describe("server backup while a server writes (SQLite, WAL)", () => {
  const s = useServer({ login: false });
  let restored: RunningServer | undefined;
  afterAll(async () => {
    await restored?.stop();
  });

  it("holds every event acknowledged before it started, passes integrity_check, and serves again", async () => {
    const url = s.server.url;
    const token = await apiToken(s.server);
    for (let i = 0; i < 200; i += 1) await createEvent(url, token, `SEED-${i}`);

    // two writers keep going for the whole run of the backup command
    const acknowledged: { code: string; at: number }[] = [];
    let writing = true;
    const writer = async (name: string) => {
      for (let i = 0; writing; i += 1) {
        const code = `${name}-${i}`;
        await createEvent(url, token, code);
        acknowledged.push({ code, at: Date.now() });
      }
    };
    const writers = [writer("A"), writer("B")];
    while (acknowledged.length < 20) await new Promise((done) => setTimeout(done, 20));

    const file = join(s.sandbox.root, "backups", "bizctl.db");
    await mkdir(join(s.sandbox.root, "backups"));
    const startedAt = Date.now();
    const before = new Set(acknowledged.filter((a) => a.at < startedAt).map((a) => a.code));
    const backup = await bizctl(["server", "backup", file], { env: s.sandbox.env });
    const endedAt = Date.now();
    writing = false;
    await Promise.all(writers);

    expect(backup.exitCode, show(backup)).toBe(0);
    const during = acknowledged.filter((a) => a.at > startedAt && a.at < endedAt);
    expect(during.length, "writes acknowledged while the backup ran").toBeGreaterThan(0);
    const result = json(backup);
    expect(result).toMatchObject({ file, pages: expect.any(Number), signingKeys: "files" });
    expect(result.keysDir).toBe(join(s.sandbox.dataDir, "keys"));
    expect(result.pages).toBeGreaterThan(200);
    const info = await stat(file);
    expect(result.size).toBe(info.size);
    expect(info.mode & 0o777).toBe(0o600);
    expect(await readdir(join(s.sandbox.root, "backups")), "no temporary file left behind").toEqual(["bizctl.db"]);
    expect(backup.stderr).toMatch(/Backed up .*bizctl\.db to .*\(\d+ bytes, \d+ pages\)/);
    expect(backup.stderr).toContain("back up that folder too");

    const db = new Database(file);
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(db.pragma("journal_mode", { simple: true }), "one self-contained file").toBe("delete");
      const codes = new Set((db.prepare("select code from events").all() as { code: string }[]).map((row) => row.code));
      const missing = [...before].filter((code) => !codes.has(code));
      expect(missing, "acknowledged before the backup started").toEqual([]);
      expect(codes.size).toBeGreaterThanOrEqual(200 + before.size);
    } finally {
      db.close();
    }

    // a restore: a copy of the data dir (it holds the key files) served from the backup file
    const copy = join(s.sandbox.root, "restored");
    await cp(s.sandbox.dataDir, copy, { recursive: true });
    restored = await startServer(copy, {
      env: { ...s.sandbox.env, BIZCTL_DATA_DIR: copy },
      args: ["--database", file],
    });
    const oldToken = await fetch(`${restored.url}/api/crm/v1/events/SEED-0`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(oldToken.status, "a token of the original server").toBe(200);
    const page = await fetch(`${restored.url}/api/crm/v1/events?pagesize=1&fields=code`, {
      headers: { authorization: `Bearer ${await apiToken(restored)}` },
    });
    expect(((await page.json()) as { total: number }).total).toBeGreaterThanOrEqual(200 + before.size);
  });

  it("replaces an existing FILE with --force", async () => {
    const file = join(s.sandbox.root, "forced.db");
    await writeFile(file, "old");
    const result = await bizctl(["server", "backup", "--force", file], { env: s.sandbox.env });
    expect(result.exitCode, show(result)).toBe(0);
    expect(json(result).size).toBe((await stat(file)).size);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      db.close();
    }
  });
});

describe("server backup refuses", () => {
  const s = useSession("embedded", { login: false });
  let postgres: { url: string; drop: () => Promise<void> } | undefined;

  beforeAll(async () => {
    await writeFile(join(s.sandbox.root, "taken.db"), "keep me");
    await writeFile(join(s.sandbox.root, "a-file"), "");
    postgres = await createTestDatabase();
  });

  afterAll(async () => {
    await postgres?.drop();
  });

  const cases: {
    name: string;
    args: (root: string) => string[];
    env?: () => Record<string, string>;
    message: RegExp;
    hint?: RegExp;
  }[] = [
    {
      name: "an existing FILE without --force",
      args: (root) => [join(root, "taken.db")],
      message: /taken\.db: it exists/,
      hint: /--force/,
    },
    {
      name: "a FILE in a directory that does not exist",
      args: (root) => [join(root, "nowhere", "b.db")],
      message: /directory does not exist/,
    },
    {
      name: "a FILE under a regular file",
      args: (root) => [join(root, "a-file", "b.db")],
      message: /not a directory/,
    },
    {
      name: "a data dir without a database",
      args: (root) => ["--data-dir", join(root, "empty"), join(root, "b.db")],
      message: /no database at .*empty/,
    },
    {
      name: "the database itself, even with --force",
      args: (root) => ["--force", join(root, "data", "bizctl.db")],
      message: /is the database being backed up/,
    },
    {
      name: "a PostgreSQL database",
      args: (root) => ["--database", postgres!.url, join(root, "pg.db")],
      env: () => ({ BIZCTL_SECRET_KEY: TEST_SECRET_KEY }),
      message: /SQLite databases only.*pg_dump/,
      hint: /pg_dump --format=custom --file=\S+ postgres:\/\//,
    },
  ];

  it.each(cases)("$name: exit 2, a message, nothing written", async ({ args, env, message, hint }) => {
    const database = await stat(join(s.sandbox.dataDir, "bizctl.db"));
    const result = await bizctl(["server", "backup", ...args(s.sandbox.root)], {
      env: { ...s.sandbox.env, ...env?.() },
    });
    expect(result.exitCode, show(result)).toBe(2);
    expect(result.stdout).toBe("");
    const error = errorOf(result);
    expect(error.message).toMatch(message);
    if (hint) expect(error.hint).toMatch(hint);
    expect(await readFile(join(s.sandbox.root, "taken.db"), "utf8")).toBe("keep me");
    expect((await readdir(s.sandbox.root)).sort()).toEqual(["a-file", "data", "taken.db"]);
    const after = await stat(join(s.sandbox.dataDir, "bizctl.db"));
    expect([after.ino, after.size], "the same file, not replaced").toEqual([database.ino, database.size]);
  });

  it.skipIf(!canDropOverride)("a directory this user cannot write: exit 2, nothing left in it", async () => {
    const readOnly = join(s.sandbox.root, "read-only");
    await mkdir(readOnly, { mode: 0o555 });
    try {
      const result = await bizctl(["server", "backup", join(readOnly, "b.db")], {
        env: s.sandbox.env,
        via: unprivileged,
      });
      expect(result.exitCode, show(result)).toBe(2);
      expect(errorOf(result).message).toMatch(/read-only\/b\.db: its directory is not writable by this user/);
      expect(await readdir(readOnly)).toEqual([]);
    } finally {
      await rmdir(readOnly);
    }
  });

  it.runIf(!canDropOverride && process.env.CI)("can drop root's permission override in CI", () => {
    throw new Error(`CI must run the unwritable-directory test, but ${NO_SETPRIV}`);
  });
});
