import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Env, errorOf, json, MODES, type RunningServer, show, startServer, useSession } from "../helpers/cli.js";

/**
 * The quotas of atomic event imports through the binary: a user holds at most two imports open
 * (both modes), and an import takes at most `--import-max-items` events (BIZCTL_IMPORT_MAX_ITEMS
 * in embedded mode).
 */

const IMPORTS = "/api/crm/v1/events/imports";

describe.each(MODES)("atomic import quotas (%s)", (mode) => {
  const s = useSession(mode);

  it("refuses a third open import (exit 6, quota_exceeded), and takes one once another is aborted", async () => {
    const open = async () => s.run(["api", "POST", IMPORTS, "--data", "{}"]);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const opened = await open();
      expect(opened.exitCode, show(opened)).toBe(0);
      ids.push(json<{ id: string }>(opened).id);
    }
    const third = await open();
    expect(third.exitCode, show(third)).toBe(6);
    expect(errorOf(third)).toMatchObject({ code: "quota_exceeded", status: 409 });
    expect(errorOf(third).message).toMatch(/commit or abort one/);
    expect((await s.run(["api", "DELETE", `${IMPORTS}/${ids[0]}`])).exitCode).toBe(0);
    const again = await open();
    expect(again.exitCode, show(again)).toBe(0);
    for (const id of [ids[1], json<{ id: string }>(again).id]) {
      expect((await s.run(["api", "DELETE", `${IMPORTS}/${id}`])).exitCode).toBe(0);
    }
  });
});

describe.each(MODES)("an atomic import beyond the items quota (%s)", (mode) => {
  const s = useSession("embedded", { login: false });
  let server: RunningServer | undefined;
  let env: Env;
  beforeAll(async () => {
    env = await s.newConfig("importer");
    if (mode === "remote") {
      server = await startServer(s.sandbox.dataDir, { env: s.env, args: ["--import-max-items", "5"] });
      expect((await s.run(["profile", "add", "r", "--server", server.url, "--use"], { env })).exitCode).toBe(0);
    } else env = { ...env, BIZCTL_IMPORT_MAX_ITEMS: "5" };
    const logged = await s.run(["auth", "login", "--user", s.userName, "--password-stdin"], {
      env,
      input: `${s.password}\n`,
    });
    expect(logged.exitCode, show(logged)).toBe(0);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("stops with exit 6 naming the setting, writes nothing, and leaves no import open", async () => {
    const file = join(s.sandbox.root, "eight.ndjson");
    const lines = Array.from({ length: 8 }, (_, i) =>
      JSON.stringify({ code: `QT-${i}`, name: `Quota ${i}`, startsAt: "2027-05-01T09:00:00Z" }),
    );
    writeFileSync(file, `${lines.join("\n")}\n`);
    const imported = await s.run(["events", "import", file, "--atomic", "--batch-size", "2"], { env });
    expect(imported.exitCode, show(imported)).toBe(6);
    // one JSON object on a piped stderr: the error, with what the CLI said it stopped
    const error = errorOf(imported);
    expect(error.messages).toContain("Stopped; nothing was written (the import is atomic).");
    expect(error.code).toBe("quota_exceeded");
    expect(error.message).toMatch(/--import-max-items, BIZCTL_IMPORT_MAX_ITEMS/);
    const listed = await s.run(["events", "list", "--json"], { env });
    expect(json<unknown[]>(listed)).toEqual([]);
    // the import the CLI opened was given up: two more can be opened
    for (let i = 0; i < 2; i++) {
      expect((await s.run(["api", "POST", IMPORTS, "--data", "{}"], { env })).exitCode).toBe(0);
    }
  });

  it.runIf(mode === "embedded")("refuses a quota variable that is not a whole number (exit 2)", async () => {
    const refused = await s.run(["events", "list"], { env: { ...env, BIZCTL_IMPORT_MAX_ITEMS: "lots" } });
    expect(refused.exitCode, show(refused)).toBe(2);
    expect(refused.stderr).toMatch(/BIZCTL_IMPORT_MAX_ITEMS must be a whole number/);
  });
});
