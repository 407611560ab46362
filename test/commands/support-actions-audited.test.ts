import { beforeAll, describe, expect, it } from "vitest";
import { type Env, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

/**
 * Every action support takes is audited with support as the actor (spec 1.11), the reset link it
 * sends included: each help-desk verb run as support on an ordinary user, then the trail read
 * back by the actor's name.
 */

const JO_PASSWORD = "tangerine harbour violet 3381 quill";
const SUPPORT_PASSWORD = "amber kettle orbit 5521 willow";

describe.each(MODES)("support's actions in the audit trail (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let support: Env;

  beforeAll(async () => {
    const created = await s.run(["users", "create", "--user-name", "desk", "--role", "support", "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
    support = await s.newConfig("support");
    expect((await s.login(support, "desk", json(created).oneTimePassword, SUPPORT_PASSWORD)).exitCode).toBe(0);
    const jo = await s.run(["users", "create", "--user-name", "jo", "--email", "jo@example.com", "--json"]);
    expect(jo.exitCode, show(jo)).toBe(0);
    // a session of jo's for support to end (a sign-out that ends none records nothing)
    const joEnv = await s.newConfig("jo");
    expect((await s.login(joEnv, "jo", json(jo).oneTimePassword, JO_PASSWORD)).exitCode).toBe(0);
  });

  const ACTIONS: { args: string[]; action: string }[] = [
    // first, while jo's session is open: the password set next ends it
    { args: ["users", "sign-out", "jo"], action: "sessions.end" },
    { args: ["users", "set-password", "jo", "--generate"], action: "password.set" },
    { args: ["users", "disable", "jo"], action: "user.disable" },
    { args: ["users", "enable", "jo"], action: "user.enable" },
    { args: ["users", "unlock", "jo"], action: "unlock" },
    { args: ["users", "invite", "jo"], action: "user.invite" },
    { args: ["users", "reset-password", "jo"], action: "password.reset_request" },
  ];

  it.each(ACTIONS)("$args.1 is recorded with support as the actor ($action)", async ({ args, action }) => {
    const ran = await s.run(args, { env: support });
    expect(ran.exitCode, show(ran)).toBe(0);
    const filter = `action eq "${action}" and target.name eq "jo"`;
    const trail = await s.run(["audit", "list", "--filter", filter, "--json"]);
    expect(trail.exitCode, show(trail)).toBe(0);
    const records = json<{ actor?: { userName?: string } | null }[]>(trail);
    // the mail sender writes the reset request's record: wait for it
    for (let i = 0; i < 50 && records.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      records.push(...json(await s.run(["audit", "list", "--filter", filter, "--json"])));
    }
    expect(records.map((record) => record.actor?.userName)).toContain("desk");
  });
});
