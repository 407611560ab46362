import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bizctl, errorOf, makeSandbox, type Sandbox, show } from "../helpers/cli.js";

/**
 * `server start` (the process) refuses a data dir that `server init` never prepared, exits 2
 * instead of serving, and creates nothing. The other commands on such a dir, and init itself:
 * test/commands/init.test.ts.
 */
describe("server start on a data dir that was never initialised", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await makeSandbox();
  });
  afterAll(async () => sandbox?.remove());

  it("refuses (exit 2) and creates nothing; a database without users counts as never initialised", async () => {
    const start = await bizctl(["server", "start", "--port", "0"], { env: sandbox.env });
    expect(start.exitCode, show(start)).toBe(2);
    expect(errorOf(start)).toMatchObject({ code: "not_initialised", hint: expect.stringContaining("server init") });
    expect(existsSync(sandbox.dataDir)).toBe(false);

    // what an older bizctl left behind: a database file (and keys), but no user
    mkdirSync(sandbox.dataDir);
    writeFileSync(join(sandbox.dataDir, "bizctl.db"), "");
    const again = await bizctl(["server", "start", "--port", "0"], { env: sandbox.env });
    expect(again.exitCode, show(again)).toBe(2);
    expect(errorOf(again).message).toBe(`The data dir ${sandbox.dataDir} was never initialised: it has no users.`);
  });
});
