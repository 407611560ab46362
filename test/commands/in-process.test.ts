import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, json, makeSandbox, type Sandbox, show } from "../helpers/cli.js";
import { type InProcessSession, inProcessSession, runInProcess } from "../helpers/in-process.js";

/**
 * Runs of run() in one process keep apart: each reads its own stdin, closes its own embedded app,
 * and takes its environment from its IO, not from the process's (the env-backed flags of the
 * `server` verbs included, which Commander reads from process.env).
 */

const event = (code: string) => JSON.stringify({ code, name: `Event ${code}`, startsAt: "2027-01-10T09:00:00Z" });

describe("runs in one process", () => {
  let s: InProcessSession;
  let other: Sandbox;
  beforeAll(async () => {
    s = await inProcessSession("embedded");
    other = await makeSandbox();
  });
  afterAll(async () => {
    await other?.remove();
    await s?.close();
  });

  it("two at once each read their own stdin and keep their own embedded app open", async () => {
    const codes = ["PAR-1", "PAR-2", "PAR-3", "PAR-4"];
    const results = await Promise.all(
      codes.map((code) => s.run(["events", "create", "--file", "-", "--json"], { input: event(code) })),
    );
    for (const result of results) expect(result.exitCode, show(result)).toBe(0);
    expect(results.map((r) => json(r).code)).toEqual(codes);
  });

  it("a server verb's env-backed flag comes from the run's environment", async () => {
    const missing = join(other.root, "no-such-key");
    const result = await runInProcess(["server", "init", "--admin-user", "admin", "--no-input"], {
      env: { ...other.env, BIZCTL_SECRET_KEY_FILE: missing },
    });
    expect(result.exitCode, show(result)).toBe(2);
    expect(errorOf(result).message).toBe(`Cannot read the secret key file ${missing}: ENOENT.`);
    const flag = await runInProcess(["server", "start", "--port", "0"], {
      env: { ...other.env, BIZCTL_ALLOW_PLAINTEXT_OVER_HTTP: "maybe" },
    });
    expect(flag.exitCode, show(flag)).toBe(2);
    expect(flag.stderr).toContain("BIZCTL_ALLOW_PLAINTEXT_OVER_HTTP must be true or false");
  });

  it("nothing of the process's environment reaches a run", async () => {
    const saved = { ...process.env };
    process.env.BIZCTL_DATA_DIR = join(other.root, "process-data");
    process.env.BIZCTL_SECRET_KEY_FILE = join(other.root, "process-key");
    try {
      const init = await runInProcess(["server", "init", "--admin-user", "admin", "--no-input", "--json"], {
        env: other.env,
      });
      expect(init.exitCode, show(init)).toBe(0);
      expect(existsSync(join(other.dataDir, "bizctl.db"))).toBe(true);
      expect(existsSync(join(other.root, "process-data"))).toBe(false);
    } finally {
      process.env = saved;
    }
  });
});
