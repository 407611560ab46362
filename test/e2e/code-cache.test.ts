import { type Stats, statSync } from "node:fs";
import { mkdir, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type CliResult, json, MODES, type Session, show, useSession } from "../helpers/cli.js";

/**
 * The code cache (src/code-cache.ts): written after a command whose bundles had none, taken by
 * the next ones, and never in the way. A cache that V8 refuses is written again, so a cache file
 * that a command leaves as it was (same inode: caches are renamed into place) is one V8 took.
 */
const cacheHome = (s: Session) => join(s.sandbox.root, ".cache");
const cacheDir = (s: Session) => join(cacheHome(s), "bizctl");

async function cacheFiles(s: Session): Promise<Map<string, Stats>> {
  const names = await readdir(cacheDir(s)).catch(() => []);
  return new Map(names.map((name) => [name, statSync(join(cacheDir(s), name))]));
}

const ok = (result: CliResult) => {
  expect(result.exitCode, show(result)).toBe(0);
  return result;
};

const ndjson = (prefix: string, count: number) =>
  Array.from(
    { length: count },
    (_, i) => `${JSON.stringify({ code: `${prefix}${i}`, name: "x", startsAt: "2027-01-10T09:00:00Z" })}\n`,
  ).join("");

describe.each(MODES)("code cache, %s", (mode) => {
  const s = useSession(mode);
  beforeAll(async () => {
    s.env.XDG_CACHE_HOME = cacheHome(s);
    ok(
      await s.run([
        "events",
        "create",
        "--set",
        "code=C1",
        "--set",
        "name=x",
        "--set",
        "startsAt=2027-01-10T09:00:00Z",
      ]),
    );
  });

  const bundles = mode === "embedded" ? ["cli", "server"] : ["cli"];

  // each: the first command, run without a cache, and the one after it, which must take it
  const scenarios: { name: string; first: string[]; input?: string }[] = [
    { name: "a list", first: ["events", "list", "--json"] },
    // the import sets V8 flags of its own: they are put back before the cache is written
    { name: "an import", first: ["events", "import", "-", "--format", "ndjson"], input: ndjson(`I${mode}`, 50) },
  ];
  it.each(scenarios)("after $name, the next command takes the cache it wrote", async ({ first, input }) => {
    await rm(cacheDir(s), { recursive: true, force: true });
    ok(await s.run(first, { input }));
    const written = await cacheFiles(s);
    expect([...written.keys()].map((name) => name.split(".")[0]).sort()).toEqual(bundles);
    for (const stats of written.values()) expect(stats.mode & 0o777).toBe(0o600);
    expect(statSync(cacheDir(s)).mode & 0o777).toBe(0o700);

    const list = ok(await s.run(["events", "list", "--json"]));
    expect(json(list).map((e: { code: string }) => e.code)).toContain("C1");
    const after = await cacheFiles(s);
    for (const [name, stats] of written) expect(after.get(name)?.ino, `${name} was written again`).toBe(stats.ino);
  });

  const damages: { name: string; damage: (bytes: Buffer) => Buffer }[] = [
    { name: "cut short", damage: (bytes) => bytes.subarray(0, bytes.length >> 1) },
    { name: "overwritten", damage: (bytes) => Buffer.alloc(bytes.length, 0x5a) },
    { name: "empty", damage: () => Buffer.alloc(0) },
  ];
  it.each(damages)(
    "a cache file $name is refused, the command answers, and a good cache replaces it",
    async ({ damage }) => {
      await rm(cacheDir(s), { recursive: true, force: true });
      ok(await s.run(["events", "list", "--json"]));
      const good = await cacheFiles(s);
      for (const name of good.keys()) {
        const file = join(cacheDir(s), name);
        await writeFile(file, damage(await readFile(file)));
      }
      // every page: a piped list of one page of several says so on stderr, which must stay empty
      const list = ok(await s.run(["events", "list", "--all", "--json"]));
      expect(list.stderr).toBe("");
      expect(json(list).map((e: { code: string }) => e.code)).toContain("C1");
      const rewritten = await cacheFiles(s);
      expect([...rewritten.keys()].sort()).toEqual([...good.keys()].sort());
      ok(await s.run(["events", "list", "--json"]));
      const taken = await cacheFiles(s);
      for (const [name, stats] of rewritten) expect(taken.get(name)?.ino, `${name} was refused again`).toBe(stats.ino);
    },
  );
});

describe("code cache settings", () => {
  const s = useSession("embedded");
  beforeAll(async () => {
    s.env.XDG_CACHE_HOME = cacheHome(s);
  });

  it("NODE_DISABLE_COMPILE_CACHE=1 writes no cache", async () => {
    await rm(cacheDir(s), { recursive: true, force: true });
    ok(await s.run(["events", "list", "--json"], { env: { NODE_DISABLE_COMPILE_CACHE: "1" } }));
    expect(await cacheFiles(s)).toEqual(new Map());
  });

  it("XDG_CACHE_HOME moves it; a cache dir that cannot be made costs nothing but the cache", async () => {
    const elsewhere = join(s.sandbox.root, "elsewhere");
    ok(await s.run(["events", "list", "--json"], { env: { XDG_CACHE_HOME: elsewhere } }));
    expect((await readdir(join(elsewhere, "bizctl"))).length).toBe(2);

    const aFile = join(s.sandbox.root, "not-a-dir");
    await writeFile(aFile, "");
    const usual = ok(await s.run(["events", "list", "--json"]));
    const list = ok(await s.run(["events", "list", "--json"], { env: { XDG_CACHE_HOME: aFile } }));
    expect([list.stdout, list.stderr]).toEqual([usual.stdout, usual.stderr]);
  });

  it("a new cache keeps the three newest caches of other builds, and nothing else goes", async () => {
    await rm(cacheDir(s), { recursive: true, force: true });
    await mkdir(cacheDir(s), { recursive: true });
    // other builds' caches, written one day apart: cli.000000000001 is the oldest
    const others = [1, 2, 3, 4].map((n) => `cli.00000000000${n}.js.node-v20.0.0-x64.v8`);
    for (const [i, name] of others.entries()) {
      await writeFile(join(cacheDir(s), name), "old");
      const day = new Date(Date.now() - (others.length - i) * 86_400_000);
      await utimes(join(cacheDir(s), name), day, day);
    }
    await writeFile(join(cacheDir(s), "notes.txt"), "mine");
    ok(await s.run(["events", "list", "--json"]));
    const names = [...(await cacheFiles(s)).keys()];
    expect(names).not.toContain(others[0]);
    expect(names).toEqual(expect.arrayContaining([...others.slice(1), "notes.txt"]));
    expect(names.length).toBe(3 + 1 + 2);
  });
});
