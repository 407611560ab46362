/**
 * The data dir and what the server keeps in it are the owner's alone (directories 0700, files
 * 0600), whatever the umask (022 here, as on most systems): made so by every command that creates
 * them, and a looser data dir of an older version (or made by hand) made so again at start, with
 * a warning naming what changed.
 */
import { chmod, mkdir, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bizctl, initDataDir, logLinesOf, makeSandbox, type Sandbox, show, startServer } from "../helpers/cli.js";

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.remove();
  sandbox = undefined;
});

/** Every path in `dir` (and `dir`) with its permission bits, as octal text. */
async function modes(dir: string): Promise<Record<string, string>> {
  const found: Record<string, string> = { ".": ((await stat(dir)).mode & 0o777).toString(8) };
  for (const entry of await readdir(dir, { recursive: true })) {
    found[entry] = ((await stat(join(dir, entry))).mode & 0o777).toString(8);
  }
  return found;
}

/** Which paths another local user could read or enter. */
const looser = (found: Record<string, string>) =>
  Object.entries(found).filter(([, mode]) => (Number.parseInt(mode, 8) & 0o077) !== 0);

describe("a data dir another local user cannot read", () => {
  it.each([
    ["server init", (box: Sandbox) => initDataDir(box.env)],
    ["server migrate", (box: Sandbox) => bizctl(["server", "migrate"], { env: box.env })],
  ])("is what %s makes", async (_verb, make) => {
    sandbox = await makeSandbox();
    await make(sandbox);
    const found = await modes(sandbox.dataDir);
    expect(found).toMatchObject({ ".": "700", "bizctl.db": "600" });
    expect(looser(found)).toEqual([]);
  });

  it.each([
    ["server start", "start"],
    ["server migrate", "migrate"],
  ] as const)("is what %s makes of a looser one, saying so", async (_verb, how) => {
    sandbox = await makeSandbox();
    await initDataDir(sandbox.env);
    const { dataDir } = sandbox;
    await mkdir(join(dataDir, "outbox"), { mode: 0o755 });
    await writeFile(join(dataDir, "outbox", "old.eml"), "Subject: a reset link\n\n", { mode: 0o644 });
    await writeFile(join(dataDir, "login-names.json"), "{}", { mode: 0o644 });
    for (const entry of await readdir(join(dataDir, "keys"))) await chmod(join(dataDir, "keys", entry), 0o644);
    await chmod(join(dataDir, "keys"), 0o755);
    await chmod(join(dataDir, "bizctl.db"), 0o644);
    await chmod(dataDir, 0o755);
    expect(looser(await modes(dataDir)).length).toBeGreaterThan(4);

    if (how === "start") {
      const server = await startServer(dataDir, { env: sandbox.env });
      const found = await modes(dataDir);
      const warning = logLinesOf<{ level: number; msg: string; paths?: string[] }>(server).find((line) =>
        /owner-only/.test(line.msg),
      );
      expect(await server.stop()).toBe(0);
      expect(looser(found)).toEqual([]);
      expect(warning?.level).toBe(40);
      expect(warning?.paths).toEqual(
        expect.arrayContaining([
          dataDir,
          join(dataDir, "bizctl.db"),
          join(dataDir, "keys"),
          join(dataDir, "outbox", "old.eml"),
        ]),
      );
    } else {
      const migrate = await bizctl(["server", "migrate"], { env: sandbox.env });
      expect(migrate.exitCode, show(migrate)).toBe(0);
      expect(looser(await modes(dataDir))).toEqual([]);
    }
  });
});
