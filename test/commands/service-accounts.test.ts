/**
 * `bizctl service-accounts` in both modes: an admin creates a service account and its token
 * (printed once), the token provisions a User and the audit trail names the account and the
 * token; the account cannot log in; support is refused before anything is asked; a revoke asks
 * first (--yes without a terminal); bad input exits 2 before any request.
 */
import { describe, expect, it } from "vitest";
import { type CliResult, errorOf, json, MODES, show } from "../helpers/cli.js";
import { signedInSupport, useInProcessSession } from "../helpers/in-process.js";

const TEMPORARY = "amber lantern quiver 5531 fjord";

describe.each(MODES)("service accounts (%s)", (mode) => {
  const s = useInProcessSession(mode);

  it("creates an account and its token, which provisions Users; the audit trail names both", async () => {
    const created = await s.run(["service-accounts", "create", "idp-sync", "--role", "admin", "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
    expect(json<Record<string, unknown>>(created)).toMatchObject({ userName: "idp-sync", roles: ["admin"] });

    const listed = await s.run(["service-accounts", "list", "--json"]);
    expect(json<{ userName: string }[]>(listed).map((one) => one.userName)).toEqual(["idp-sync"]);

    const made = await s.run([
      "service-accounts",
      "token-create",
      "idp-sync",
      "--name",
      "Okta",
      "--scope",
      "resources:write",
      "--scope",
      "resources:read",
      "--json",
    ]);
    expect(made.exitCode, show(made)).toBe(0);
    const token = json<{ token: string; id: string; name: string }>(made);
    expect(token.token).toMatch(/^bzt_/);

    const env = { BIZCTL_TOKEN: token.token };
    const user = await s.run(["resources", "create", "--type", "User", "--set", "userName=grace", "--json"], { env });
    expect(user.exitCode, show(user)).toBe(0);

    const tokens = await s.run(["service-accounts", "tokens", "idp-sync", "--json"]);
    expect(json<{ id: string }[]>(tokens).map((one) => one.id)).toEqual([token.id]);
    expect(tokens.stdout).not.toContain(token.token);

    const unconfirmed = await s.run(["service-accounts", "token-revoke", "idp-sync", token.id]);
    expect(unconfirmed.exitCode, show(unconfirmed)).toBe(2);
    // by the name the token list shows, as `auth tokens revoke` and `users tokens revoke` take it
    const revokes: [reference: string, exitCode: number, says: (result: CliResult) => string, text: string][] = [
      ["Nope", 3, (result) => errorOf(result).message, "idp-sync has no API token 'Nope'"],
      ["Okta", 0, (result) => result.stderr, token.id],
    ];
    for (const [reference, exitCode, says, text] of revokes) {
      const result = await s.run(["service-accounts", "token-revoke", "idp-sync", reference, "--yes"]);
      expect(result.exitCode, show(result)).toBe(exitCode);
      expect(says(result)).toContain(text);
    }
    expect((await s.run(["users", "list", "--json"], { env })).exitCode).toBe(4);

    const audit = await s.run([
      "audit",
      "list",
      "--filter",
      'action eq "user.create" and target.name eq "grace"',
      "--json",
    ]);
    expect(audit.exitCode, show(audit)).toBe(0);
    const records = json<{ actor: Record<string, string> }[]>(audit);
    expect(records.map((record) => record.actor)).toEqual([
      expect.objectContaining({ userName: "idp-sync", apiTokenId: token.id, apiTokenName: "Okta" }),
    ]);
  });

  it("refuses the account's login (exit 5)", async () => {
    await s.run(["service-accounts", "create", "robot", "--role", "member"]);
    const env = await s.newConfig("robot");
    const login = await s.run(["auth", "login", "--user", "robot", "--password-stdin"], {
      env,
      input: `${TEMPORARY}\n`,
    });
    expect(login.exitCode, show(login)).toBe(5);
    expect(errorOf(login)).toMatchObject({ code: "service_account" });
  });

  it("refuses support before anything is asked (exit 5)", async () => {
    const env = await signedInSupport(s, "sue");
    for (const argv of [
      ["service-accounts", "list"],
      ["service-accounts", "create", "x", "--role", "member"],
      ["service-accounts", "token-revoke", "idp-sync", "some-id"],
    ]) {
      const result = await s.run(argv, { env });
      expect(result.exitCode, show(result)).toBe(5);
      expect(errorOf(result).message).toMatch(/Only an admin may .*service accounts/);
    }
  });

  it.each([
    { argv: ["service-accounts", "create", "x"], message: /--role is required/ },
    { argv: ["service-accounts", "create", "x", "--role", "owner"], message: /Unknown role 'owner'/ },
    { argv: ["service-accounts", "token-create", "x", "--scope", "all"], message: /Unknown scope 'all'/ },
    { argv: ["service-accounts", "token-create", "x", "--expires", "2y"], message: /--expires takes/ },
  ])("exits 2 on $argv", async ({ argv, message }) => {
    const result = await s.run(argv);
    expect(result.exitCode, show(result)).toBe(2);
    expect(errorOf(result).message).toMatch(message);
  });
});
