import { describe, expect, it } from "vitest";
import { type Env, errorOf, json, MODES, show, startServer } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

/**
 * Sessions through the commands (issue 14, part 4): staff list and end a user's sessions, a user
 * lists its own (the current one marked) and ends the others; an ended session's token is
 * refused by the very next command.
 */

const TEMPORARY = "ochre violin summit 4478 tundra";
const MEMBER_PASSWORD = "velvet harbour quartz 6620 meadow";

interface SessionRow {
  id: string;
  current?: boolean;
  clientIp?: string;
  userAgent?: string;
  created: string;
  expires: string;
}

describe.each(MODES)("sessions (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let counter = 0;

  /** A member with an e-mail, logged in on `devices` config dirs of its own. */
  async function memberOn(devices: number) {
    const userName = `sess${++counter}`;
    const created = await s.run(
      ["users", "create", "--user-name", userName, "--email", `${userName}@example.com`, "--password-stdin"],
      {
        input: `${TEMPORARY}\n`,
      },
    );
    expect(created.exitCode, show(created)).toBe(0);
    const envs = [];
    for (let i = 0; i < devices; i++) {
      const env = await s.newConfig(`${userName}-${i}`);
      // the first login replaces the temporary password (which ends no session of the others: none yet)
      const result =
        i === 0
          ? await s.login(env, userName, TEMPORARY, MEMBER_PASSWORD)
          : await s.login(env, userName, MEMBER_PASSWORD);
      expect(result.exitCode, show(result)).toBe(0);
      envs.push(env);
    }
    return { userName, email: `${userName}@example.com`, envs };
  }

  it("auth sessions marks the current one and names the CLI; sign-out --others leaves only it", async () => {
    const { envs } = await memberOn(3);
    const [laptop, phone, tablet] = envs;
    const listed = await s.run(["auth", "sessions", "--json"], { env: laptop });
    expect(listed.exitCode, show(listed)).toBe(0);
    const rows = json<SessionRow[]>(listed);
    expect(rows).toHaveLength(3);
    expect(rows.filter((r) => r.current)).toHaveLength(1);
    expect(rows.every((r) => r.userAgent?.startsWith("bizctl/") && r.clientIp)).toBe(true);

    const out = await s.run(["auth", "sign-out", "--others"], { env: laptop });
    expect(out.exitCode, show(out)).toBe(0);
    expect(out.stderr).toContain("Ended 2 other sessions");
    for (const env of [phone, tablet]) {
      const refused = await s.run(["events", "list"], { env });
      expect(refused.exitCode, show(refused)).toBe(4);
      expect(errorOf(refused).code).toBe("token_revoked");
    }
    const still = await s.run(["auth", "sessions", "--json"], { env: laptop });
    expect(json<SessionRow[]>(still).map((r) => r.current)).toEqual([true]);
  });

  it("auth sign-out --session ends that one; this very session is left to auth logout", async () => {
    const { envs } = await memberOn(2);
    const [mine, other] = envs;
    const rows = json<SessionRow[]>(await s.run(["auth", "sessions", "--json"], { env: mine }));
    const current = rows.find((r) => r.current)!;
    const self = await s.run(["auth", "sign-out", "--session", current.id], { env: mine });
    expect(self.exitCode, show(self)).toBe(2);
    expect(errorOf(self).hint).toContain("auth logout");
    const ended = await s.run(["auth", "sign-out", "--session", rows.find((r) => !r.current)!.id], { env: mine });
    expect(ended.exitCode, show(ended)).toBe(0);
    expect((await s.run(["events", "list"], { env: other })).exitCode).toBe(4);
    expect((await s.run(["events", "list"], { env: mine })).exitCode).toBe(0);
    const neither = await s.run(["auth", "sign-out"], { env: mine });
    expect(neither.exitCode, show(neither)).toBe(2);
  });

  it("users sessions and users sign-out, by e-mail, one session or all", async () => {
    const { email, userName, envs } = await memberOn(2);
    const listed = await s.run(["users", "sessions", email, "--json"]);
    expect(listed.exitCode, show(listed)).toBe(0);
    const rows = json<SessionRow[]>(listed);
    expect(rows).toHaveLength(2);
    const oneOut = await s.run(["users", "sign-out", userName, "--session", rows[0]!.id]);
    expect(oneOut.exitCode, show(oneOut)).toBe(0);
    const outcomes = await Promise.all(envs.map(async (env) => (await s.run(["events", "list"], { env })).exitCode));
    expect(outcomes.sort()).toEqual([0, 4]);
    const allOut = await s.run(["users", "sign-out", email]);
    expect(allOut.exitCode, show(allOut)).toBe(0);
    expect(allOut.stderr).toContain(`Ended 1 session of ${userName}`);
    for (const env of envs) expect((await s.run(["events", "list"], { env })).exitCode).toBe(4);
    const unknown = await s.run(["users", "sign-out", userName, "--session", "no-such-session"]);
    expect(unknown.exitCode, show(unknown)).toBe(3);
  });

  it("users sign-out of a user with no open session says so and writes no audit record", async () => {
    const { userName } = await memberOn(1);
    expect((await s.run(["users", "sign-out", userName])).exitCode).toBe(0);
    const again = await s.run(["users", "sign-out", userName]);
    expect(again.exitCode, show(again)).toBe(0);
    expect(again.stderr).toContain(`${userName} had no open session.`);
    const audit = await s.run(["audit", "list", "--filter", `action eq "sessions.end"`, "--all", "--json"]);
    expect(audit.exitCode, show(audit)).toBe(0);
    const ends = json<{ target?: { name?: string } }[]>(audit).filter((r) => r.target?.name === userName);
    expect(ends).toHaveLength(1);
  });
});

describe("the session cap through `server start --max-sessions`", () => {
  const s = useInProcessSession("embedded", { login: false });

  it("ends the oldest login beyond the cap: its config dir is told to log in again (exit 4)", async () => {
    const server = await startServer(s.sandbox.dataDir, { env: s.env, args: ["--max-sessions", "2"] });
    try {
      const devices: Env[] = [];
      for (const name of ["laptop", "desktop", "phone"]) {
        const env = await s.newConfig(name);
        expect((await s.run(["profile", "add", "r", "--server", server.url, "--use"], { env })).exitCode).toBe(0);
        const logged = await s.login(env, s.userName, s.password);
        expect(logged.exitCode, show(logged)).toBe(0);
        devices.push(env);
      }
      const oldest = await s.run(["auth", "status"], { env: devices[0] });
      expect(oldest.exitCode, show(oldest)).toBe(4);
      for (const env of devices.slice(1)) expect((await s.run(["auth", "status"], { env })).exitCode).toBe(0);
    } finally {
      await server.stop();
    }
  });

  it.each(["0", "-1", "many"])("refuses --max-sessions %s (exit 2)", async (value) => {
    const started = await s.run(["server", "start", "--port", "0", "--max-sessions", value]);
    expect(started.exitCode, show(started)).toBe(2);
    expect(started.stderr).toMatch(/--max-sessions/);
  });
});
