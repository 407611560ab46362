import { beforeAll, describe, expect, it } from "vitest";
import { type Env, errorOf, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

/**
 * `bizctl access explain USER OPERATION` (spec 1.11) in both modes: for each scenario (support
 * held directly or from a group, a member, least privilege) the explanation (JSON when piped, a
 * story on a terminal), then the same command run for real as that user: its outcome is the one
 * explained. An unknown operation exits 2 with the valid ones.
 */

const CHOSEN = "saffron glacier mosaic 7781 fern";

describe.each(MODES)("access explain (%s)", (mode) => {
  const s = useInProcessSession(mode);
  const as: Record<string, Env> = {};

  async function person(userName: string, ...more: string[]): Promise<void> {
    const created = await s.run(["users", "create", "--user-name", userName, "--json", ...more]);
    expect(created.exitCode, show(created)).toBe(0);
    as[userName] = await s.newConfig(userName);
    const first = await s.login(as[userName]!, userName, json(created).oneTimePassword, CHOSEN);
    expect(first.exitCode, show(first)).toBe(0);
  }

  beforeAll(async () => {
    await person("sue", "--role", "support");
    await person("gus", "--role", "member");
    await person("mia", "--role", "member");
    expect((await s.run(["groups", "create", "Help Desk", "--role", "support"])).exitCode).toBe(0);
    expect((await s.run(["groups", "add-member", "Help Desk", "gus"])).exitCode).toBe(0);
  }, 180_000);

  let serial = 0;
  const event = () => [
    "events",
    "create",
    "--set",
    `code=CLI-${++serial}`,
    "--set",
    "name=Kick",
    "--set",
    "startsAt=2027-05-01T10:00:00Z",
  ];

  it.each([
    {
      who: "sue",
      operation: "users:unlock",
      target: "mia",
      allowed: true,
      rule: "grant",
      real: ["users", "unlock", "mia"],
    },
    {
      who: "sue",
      operation: "users:unlock",
      target: "admin",
      allowed: false,
      rule: "least-privilege",
      real: ["users", "unlock", "admin"],
    },
    {
      who: "gus",
      operation: "users:unlock",
      target: "mia",
      allowed: true,
      rule: "grant",
      real: ["users", "unlock", "mia"],
    },
    {
      who: "gus",
      operation: "users:unlock",
      target: "sue",
      allowed: false,
      rule: "least-privilege",
      real: ["users", "unlock", "sue"],
    },
    { who: "mia", operation: "events:write", allowed: true, rule: "grant", real: "event" },
    { who: "sue", operation: "events:write", allowed: false, rule: "no-grant", real: "event" },
  ])(
    "$who $operation on $target: explained $rule, and so it goes for real",
    async ({ who, operation, target, allowed, rule, real }) => {
      const args = ["access", "explain", who, operation, ...(target ? ["--target", target] : [])];
      const piped = await s.run(args);
      expect(piped.exitCode, show(piped)).toBe(0);
      const explained = json(piped);
      expect(explained.allowed).toBe(allowed);
      expect(explained.reasons.at(-1).rule).toBe(rule);
      const story = await s.run(args, { tty: true });
      expect(story.exitCode, show(story)).toBe(0);
      expect(story.stdout).toContain(`${who} ${allowed ? "may" : "may not"} ${operation}`);
      expect(story.stdout).toMatch(/Roles: .*\(held directly\)|Roles: .*from the group Help Desk/);

      const done = await s.run(real === "event" ? event() : (real as string[]), { env: as[who] });
      expect(done.exitCode === 0, show(done)).toBe(allowed);
      if (!allowed) expect(errorOf(done).code).toBe("forbidden");
    },
  );

  it("tells on a terminal where a group role comes from", async () => {
    const story = await s.run(["access", "explain", "gus", "users:unlock"], { tty: true });
    expect(story.stdout).toContain("Roles: support (from the group Help Desk), member (held directly).");
  });

  it("exits 2 on an unknown operation, naming the valid ones; support may ask, a member may not", async () => {
    const unknown = await s.run(["access", "explain", "mia", "users:fly"]);
    expect(unknown.exitCode, show(unknown)).toBe(2);
    expect(errorOf(unknown).message).toContain("users:set-password");
    expect((await s.run(["access", "explain", "mia", "events:write"], { env: as.sue })).exitCode).toBe(0);
    // a member finds no one else by name, and may not ask even of itself
    expect(errorOf(await s.run(["access", "explain", "gus", "events:write"], { env: as.mia })).code).toBe("not_found");
    expect(errorOf(await s.run(["access", "explain", "mia", "events:write"], { env: as.mia })).code).toBe("forbidden");
  });
});
