import { beforeAll, describe, expect, it } from "vitest";
import { createEventArgv, json, MODES, show, useSession } from "../helpers/cli.js";

/**
 * `--verbose` through the binary: embedded, the server's own log is written to the process's
 * stderr (fd 2), which only a real process shows; the token is masked in the trace and absent
 * from that log.
 */
describe.each(MODES)("--verbose (%s)", (mode) => {
  const s = useSession(mode);
  beforeAll(async () => {
    const created = await s.run([...createEventArgv("QUIET", "Quiet"), "-q"]);
    expect(created.exitCode, show(created)).toBe(0);
  });

  it("traces each call on stderr with the token masked", async () => {
    const token = (await s.run(["auth", "token"])).stdout.trim();
    const verbose = await s.run(["--verbose", "events", "get", "QUIET"]);
    expect(verbose.exitCode, show(verbose)).toBe(0);
    expect(json(verbose).code).toBe("QUIET");
    expect(verbose.stderr).toMatch(/^> GET \/api\/crm\/v1\/events\/QUIET .*Bearer \*\*\*/m);
    expect(verbose.stderr).toMatch(/^< 200 GET \/api\/crm\/v1\/events\/QUIET/m);
    expect(verbose.stderr).not.toContain(token);
    expect(verbose.stderr).not.toContain(token.split(".")[2]);
  });
});
