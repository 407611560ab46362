/**
 * Through the built binary, embedded and against a server (issue 41): logged in with an API token
 * (`auth login --with-token`), an admin cannot move its own account's e-mail address, where reset
 * links go, nor create a user with a password; both exit 5 and change nothing. Its own login can.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type Env, errorOf, json, MODES, show, useSession } from "../helpers/cli.js";

const ATTACKER = "attacker@evil.example";

describe.each(MODES)("a delegated credential and the account's address (%s)", (mode) => {
  const s = useSession(mode);
  let tokenEnv: Env;

  beforeAll(async () => {
    const created = await s.run(["auth", "tokens", "create", "--name", "script", "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
    tokenEnv = await s.newConfig("with-token");
    const login = await s.run(["auth", "login", "--with-token"], {
      env: tokenEnv,
      input: `${json(created).token}\n`,
    });
    expect(login.exitCode, show(login)).toBe(0);
  }, 120_000);

  const emailsOf = async () => json(await s.run(["users", "get", s.userName, "--json"])).emails;

  it.each([
    [
      "users update --set emails",
      () => ["users", "update", s.userName, "--set", `emails=[{"value":"${ATTACKER}","primary":true}]`],
    ],
    [
      "resources patch of the emails",
      () => ["resources", "patch", s.userId, "--op", `add:emails[type eq "home"].value=${ATTACKER}`],
    ],
  ])("%s of its own account with the token: exit 5, nothing changed", async (_name, args) => {
    const before = await emailsOf();
    const result = await s.run(args(), { env: tokenEnv });
    expect(result.exitCode, show(result)).toBe(5);
    expect(errorOf(result).code).toBe("forbidden");
    expect(result.stderr).toMatch(/e-mail addresses need the user's own login/);
    expect(await emailsOf()).toEqual(before);
  });

  it("users create with a password through the token: exit 5, no user", async () => {
    const result = await s.run(["users", "create", "--user-name", "backdoor", "--role", "admin", "--password-stdin"], {
      env: tokenEnv,
      input: "a long enough passphrase 8812 heron\n",
    });
    expect(result.exitCode, show(result)).toBe(5);
    expect(errorOf(result).code).toBe("forbidden");
    expect((await s.run(["users", "get", "backdoor"])).exitCode).toBe(3);
  });

  it("the admin's own login changes its own address", async () => {
    const result = await s.run([
      "users",
      "update",
      s.userName,
      "--set",
      'emails=[{"value":"admin@example.com","primary":true}]',
    ]);
    expect(result.exitCode, show(result)).toBe(0);
  });
});
