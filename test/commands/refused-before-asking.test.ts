import { beforeAll, describe, expect, it } from "vitest";
import { json, MODES, show } from "../helpers/cli.js";
import { signedInSupport, useInProcessSession } from "../helpers/in-process.js";

/**
 * Issue 32 part 4: permission before any prompt, for the confirmations that support_desk's table
 * does not cover. Support staff on a terminal were asked to confirm, answered, and only then
 * refused; now the caller's roles are checked first and nothing is asked.
 */

describe.each(MODES)("support is refused before the question (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let desk: Record<string, string>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    desk = await signedInSupport(s, "desk");
    const room = await s.run(["resources", "create", "--type", "Room", "--set", "name=desk", "--json"]);
    expect(room.exitCode, show(room)).toBe(0);
    ids.room = json(room).id;
    const consumer = await s.run(["oauth", "consumers", "create", "--name", "DeskApp", "--json"]);
    expect(consumer.exitCode, show(consumer)).toBe(0);
    ids.consumer = json(consumer).id;
  }, 120_000);

  const ASKED: { name: string; args: () => string[]; refusal: RegExp; question: RegExp }[] = [
    {
      name: "resources delete",
      args: () => ["resources", "delete", ids.room!],
      refusal: /Only an admin may delete resources, and your account is support: ask an admin to do it\./,
      question: /Delete Room/,
    },
    {
      name: "oauth consumers delete",
      args: () => ["oauth", "consumers", "delete", ids.consumer!],
      refusal: /Only an admin may delete OAuth consumers, and your account is support/,
      question: /Delete OAuth consumer/,
    },
    {
      name: "users mfa-reset of an admin",
      args: () => ["users", "mfa-reset", "admin"],
      refusal: /Only an admin may reset the second factor of admin, who holds the admin or support role, and your/,
      question: /Remove the second factor/,
    },
    {
      name: "users revoke-token",
      args: () => ["users", "revoke-token", "admin", "some-token-id"],
      refusal: /Only an admin may revoke the API tokens of users, and your account is support/,
      question: /Revoke API token/,
    },
  ];
  it.each(ASKED)("$name on a terminal: refused (exit 5), nothing asked", async (c) => {
    const result = await s.run(c.args(), { env: desk, tty: true, input: "" });
    expect(result.exitCode, show(result)).toBe(5);
    expect(result.stderr).toMatch(c.refusal);
    expect(result.stderr).not.toMatch(c.question);
  });

  it.each(ASKED)("$name without a terminal: refused (exit 5), not sent for --yes", async (c) => {
    const result = await s.run(c.args(), { env: desk });
    expect(result.exitCode, show(result)).toBe(5);
    expect(result.stderr).not.toMatch(/Refusing without a terminal/);
  });
});
