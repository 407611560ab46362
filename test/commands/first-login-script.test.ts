import { describe, expect, it } from "vitest";
import { errorOf, json, MODES, show, useSession } from "../helpers/cli.js";

/**
 * Issue 47 (4): a scripted first login that has no new-password line fails (exit 2, naming the
 * line) and stores no session, where it exited 0 and left a session every command refused (5).
 * Issue 47 (3): with stderr piped, a failing first login is one JSON object, not lines first.
 */
describe.each(MODES)("a scripted first login without the new password (%s)", (mode) => {
  const s = useSession(mode);

  it("exits 2 naming the missing line, stores nothing, and the two-line login works", async () => {
    const created = await s.run(["users", "create", "--user-name", "newbie", "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
    const { oneTimePassword } = json(created);
    const env = await s.newConfig("newbie");

    const short = await s.login(env, "newbie", oneTimePassword);
    expect(short.exitCode, show(short)).toBe(2);
    expect(errorOf(short)).toMatchObject({ code: "usage", message: expect.stringContaining("stdin has no line 2") });
    expect(errorOf(short).message).toContain("new password");
    const status = await s.run(["auth", "status"], { env });
    expect(status.exitCode, show(status)).toBe(4);
    const user = json(await s.run(["users", "get", "newbie", "--json"]));
    expect(user.openSessions).toBe(0);

    // stderr piped: a failure is one JSON object, what the command said before it among its messages
    const weak = await s.login(env, "newbie", oneTimePassword, "abc");
    expect(weak.exitCode, show(weak)).toBe(7);
    expect(errorOf(weak)).toMatchObject({
      code: "weak_password",
      messages: expect.arrayContaining(["Your password is temporary: choose a new one now."]),
    });
    // a refused new password keeps no session, here or on the server
    expect((await s.run(["auth", "status"], { env })).exitCode).toBe(4);
    expect(json(await s.run(["users", "get", "newbie", "--json"])).openSessions).toBe(0);

    const full = await s.login(env, "newbie", oneTimePassword, "A-Sturdy-New-Passw0rd!");
    expect(full.exitCode, show(full)).toBe(0);
    // and a success says the same as lines, as it goes
    expect(full.stderr).toMatch(/^Logged in to .* as newbie/m);
    expect(full.stderr).toContain("Your password is temporary: choose a new one now.\n");
    expect((await s.run(["users", "get", "newbie"], { env })).exitCode).toBe(0);
  });
});
