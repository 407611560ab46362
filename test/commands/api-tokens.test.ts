/**
 * API tokens through the CLI, in both modes: `auth tokens create` shows the token once (alone on
 * stdout at a terminal, the record when piped), the token works as BIZCTL_TOKEN within its scopes
 * and is refused once revoked; `auth login --with-token` keeps a token the server accepts, and
 * `auth status` says it is one; an admin lists and revokes another user's tokens; bad input exits
 * 2 before any request.
 */
import { describe, expect, it } from "vitest";
import { type Env, errorOf, json, MODES, show } from "../helpers/cli.js";
import { expectScenario, type Scenario, useInProcessSession } from "../helpers/in-process.js";

interface Created {
  token: string;
  id: string;
  name: string;
  scopes: string[];
  expiresAt: string;
}

const TEMPORARY = "amber lantern quiver 5531 fjord";
const MEMBER_PASSWORD = "copper meadow tangent 8142 raven";
const DAY_MS = 86_400_000;

describe.each(MODES)("API tokens (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let members = 0;

  /** `auth tokens create ARGS --json` in `env` (the admin's login by default): the created record. */
  async function create(args: string[], env?: Env): Promise<Created> {
    const result = await s.run(["auth", "tokens", "create", ...args, "--json"], { env });
    expect(result.exitCode, show(result)).toBe(0);
    return json<Created>(result);
  }

  /** A member logged in on a config dir of its own (its temporary password replaced at the first login). */
  async function member() {
    const userName = `tok${++members}`;
    const created = await s.run(["users", "create", "--user-name", userName, "--password-stdin"], {
      input: `${TEMPORARY}\n`,
    });
    expect(created.exitCode, show(created)).toBe(0);
    const env = await s.newConfig(userName);
    const login = await s.login(env, userName, TEMPORARY, MEMBER_PASSWORD);
    expect(login.exitCode, show(login)).toBe(0);
    return { userName, env };
  }

  it("a token with events:read lists events, may not create one nor tokens, and is refused once revoked", async () => {
    const created = await create(["--name", "nightly export", "--scope", "events:read", "--expires", "30d"]);
    expect(created.token).toMatch(/^bzt_[0-9A-Za-z]{32}$/);
    expect(created).toMatchObject({ name: "nightly export", scopes: ["events:read"] });
    expect(Date.parse(created.expiresAt) - Date.now()).toBeGreaterThan(29 * DAY_MS);
    expect(Date.parse(created.expiresAt) - Date.now()).toBeLessThanOrEqual(30 * DAY_MS);
    const withToken = { BIZCTL_TOKEN: created.token };

    const listed = await s.run(["events", "list", "--json"], { env: withToken });
    expect(listed.exitCode, show(listed)).toBe(0);
    const write = await s.run(
      ["events", "create", "--set", "code=TOK-1", "--set", "name=No", "--set", "startsAt=2027-05-01T10:00:00Z"],
      { env: withToken },
    );
    expect(write.exitCode, show(write)).toBe(5);
    expect(errorOf(write).message).toMatch(/scope events:write/);
    const child = await s.run(["auth", "tokens", "create", "--name", "child"], { env: withToken });
    expect(child.exitCode, show(child)).toBe(5);
    expect(errorOf(child)).toMatchObject({ code: "forbidden" });
    expect(errorOf(child).message).toMatch(/BIZCTL_TOKEN holds an API token.*cannot manage API tokens/);
    expect(errorOf(child).hint).toMatch(/unset BIZCTL_TOKEN/);

    const mine = await s.run(["auth", "tokens", "list", "--json"]);
    expect(mine.exitCode, show(mine)).toBe(0);
    const row = json<Record<string, unknown>[]>(mine).find((t) => t.id === created.id);
    expect(row).toMatchObject({ name: "nightly export", scopes: ["events:read"], lastUsedAt: expect.any(String) });
    expect(mine.stdout).not.toContain(created.token);

    // without a terminal, revoking needs --yes
    const unconfirmed = await s.run(["auth", "tokens", "revoke", created.id]);
    expect(unconfirmed.exitCode, show(unconfirmed)).toBe(2);
    const revoked = await s.run(["auth", "tokens", "revoke", created.id, "--yes"]);
    expect(revoked.exitCode, show(revoked)).toBe(0);
    const after = await s.run(["events", "list"], { env: withToken });
    expect(after.exitCode, show(after)).toBe(4);
    expect(errorOf(after)).toMatchObject({ code: "token_revoked" });
    expect(errorOf(after).hint).toMatch(/BIZCTL_TOKEN holds an API token.*auth tokens create/);
  });

  it("auth tokens revoke and users revoke-token take a token's name as well as its id", async () => {
    const { userName, env } = await member();
    const mine = await create(["--name", "report"], env);
    const twins = [await create(["--name", "twin"], env), await create(["--name", "twin"], env)];
    const scenarios: Scenario[] = [
      {
        name: "an unknown name",
        args: ["auth", "tokens", "revoke", "nope", "--yes"],
        env,
        wantExit: 3,
        wantStderr: /no API token 'nope'/,
      },
      {
        name: "a name two tokens share",
        args: ["auth", "tokens", "revoke", "twin", "--yes"],
        env,
        wantExit: 2,
        wantStderr: /2 API tokens are named 'twin'/,
      },
      {
        name: "a name, by its owner",
        args: ["auth", "tokens", "revoke", "report", "--yes"],
        env,
        wantExit: 0,
        wantStderr: new RegExp(`Revoked API token 'report' \\(${mine.id}\\)`),
      },
      {
        name: "a name, by an admin",
        args: ["users", "revoke-token", userName, "twin", "--yes"],
        wantExit: 2,
        wantStderr: /named 'twin'/,
      },
      { name: "an id, by an admin", args: ["users", "revoke-token", userName, twins[0]!.id, "--yes"], wantExit: 0 },
      {
        name: "the name now one token's, by an admin",
        args: ["users", "revoke-token", userName, "twin", "--yes"],
        wantExit: 0,
        wantStderr: new RegExp(twins[1]!.id),
      },
    ];
    for (const scenario of scenarios) await expectScenario(s, scenario);
    const left = await s.run(["auth", "tokens", "list", "--json"], { env });
    expect(json(left)).toEqual([]);
  });

  it("at a terminal the token alone is on stdout, and stderr says it is shown this once", async () => {
    const result = await s.run(["auth", "tokens", "create", "--name", "terminal"], { tty: true });
    expect(result.exitCode, show(result)).toBe(0);
    expect(result.stdout).toMatch(/^bzt_[0-9A-Za-z]{32}\n$/);
    expect(result.stderr).toMatch(/API token 'terminal' created/);
    expect(result.stderr).toMatch(/shown this once/);
    expect(result.stderr).not.toContain(result.stdout.trim());
  });

  it("login --with-token keeps the token, and auth status says it is an API token", async () => {
    const created = await create(["--name", "laptop", "--scope", "events:read", "--scope", "audit:read"]);
    const env = await s.newConfig("with-token");
    const login = await s.run(["auth", "login", "--with-token"], { env, input: `${created.token}\n` });
    expect(login.exitCode, show(login)).toBe(0);
    expect(login.stderr).toContain("with API token 'laptop'");
    expect(json(login)).toMatchObject({ user: s.userName, credentialType: "api-token", tokenName: "laptop" });

    const status = await s.run(["auth", "status", "--json"], { env });
    expect(status.exitCode, show(status)).toBe(0);
    expect(json(status)).toMatchObject({
      credentialSource: "profile",
      credentialType: "api-token",
      tokenId: created.id,
      tokenName: "laptop",
      scopes: ["events:read", "audit:read"],
      expiresAt: created.expiresAt,
      user: s.userName,
    });
    const token = await s.run(["auth", "token"], { env });
    expect(token.stdout).toBe(`${created.token}\n`);
    const events = await s.run(["events", "list", "--json"], { env });
    expect(events.exitCode, show(events)).toBe(0);

    // the admin's own login is a session
    const own = await s.run(["auth", "status", "--json"]);
    expect(json(own)).toMatchObject({ credentialType: "session" });
    expect(json(own)).not.toHaveProperty("tokenName");

    // a logout with it revokes it (the server's rule for a logout with a token)
    const logout = await s.run(["auth", "logout"], { env });
    expect(logout.exitCode, show(logout)).toBe(0);
    expect(logout.stderr).toMatch(/Revoked the API token of profile '.+' on the server, and forgot it/);
    const used = await s.run(["events", "list"], { env: { BIZCTL_TOKEN: created.token } });
    expect(used.exitCode, show(used)).toBe(4);
  });

  const REFUSED: (Omit<Scenario, "args" | "wantExit"> & { wantExit: 2 | 4; wantCode: string })[] = [
    { name: "empty stdin", stdin: "", wantExit: 2, wantCode: "usage", wantStderr: /stdin is empty/ },
    { name: "a blank line", stdin: "\n", wantExit: 2, wantCode: "usage", wantStderr: /stdin is empty/ },
    { name: "a password", stdin: "hunter2\n", wantExit: 2, wantCode: "usage", wantStderr: /begin with bzt_/ },
    {
      name: "an unknown token",
      stdin: "bzt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
      wantExit: 4,
      wantCode: "token_invalid",
      wantStderr: /nothing was stored/,
    },
  ];

  it.each(REFUSED)("login --with-token refuses $name (exit $wantExit) and keeps the login it had", async (scenario) => {
    const result = await expectScenario(s, { ...scenario, args: ["auth", "login", "--with-token"] });
    expect(errorOf(result).code).toBe(scenario.wantCode);
    const status = await s.run(["auth", "status", "--json"]);
    expect(json(status)).toMatchObject({ credentialType: "session", user: s.userName });
  });

  it("login --with-token with --user is a usage error", async () => {
    const result = await s.run(["auth", "login", "--with-token", "--user", "admin"], { input: "bzt_x\n" });
    expect(result.exitCode, show(result)).toBe(2);
  });

  const BAD_FLAGS: [string, string[], RegExp][] = [
    ["--expires 400d", ["--expires", "400d"], /--expires.*1 to 366/],
    ["--expires 0d", ["--expires", "0d"], /--expires.*1 to 366/],
    ["--expires 2w", ["--expires", "2w"], /--expires.*1 to 366/],
    ["--expires 30", ["--expires", "30"], /--expires.*1 to 366/],
    ["an unknown scope", ["--scope", "events:delete"], /Unknown scope 'events:delete'/],
  ];

  it.each(BAD_FLAGS)("create with %s exits 2 before any request", async (_name, flags, message) => {
    const result = await s.run(["--verbose", "auth", "tokens", "create", "--name", "bad", ...flags]);
    expect(result.exitCode, show(result)).toBe(2);
    expect(errorOf(result).message).toMatch(message);
    expect(result.stderr).not.toMatch(/> POST/);
  });

  it("an admin lists and revokes another user's token; the member's token is refused after", async () => {
    const { userName, env } = await member();
    const created = await create(["--name", "member script", "--scope", "events:read"], env);

    const listed = await s.run(["users", "tokens", userName, "--json"]);
    expect(listed.exitCode, show(listed)).toBe(0);
    expect(json(listed)).toEqual([expect.objectContaining({ id: created.id, name: "member script" })]);

    const revoked = await s.run(["users", "revoke-token", userName, created.id, "--yes"]);
    expect(revoked.exitCode, show(revoked)).toBe(0);
    expect(revoked.stderr).toContain(`Revoked API token 'member script' (${created.id}) of ${userName}`);
    const used = await s.run(["events", "list"], { env: { BIZCTL_TOKEN: created.token } });
    expect(used.exitCode, show(used)).toBe(4);
    const empty = await s.run(["users", "tokens", userName, "--json"]);
    expect(json(empty)).toEqual([]);

    // the admin's verbs are for admins, even on one's own user; an unknown token is not found
    const forbidden = await s.run(["users", "tokens", userName], { env });
    expect(forbidden.exitCode, show(forbidden)).toBe(5);
    const unknown = await s.run(["users", "revoke-token", userName, "no-such-token", "--yes"]);
    expect(unknown.exitCode, show(unknown)).toBe(3);
  });
});
