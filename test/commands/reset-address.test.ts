/**
 * `bizctl users reset-password` in both modes, for an admin whose address an admin's API token
 * set: the server mails no link there (contract/policy/addresses.ts) and answers the forgot-password
 * request as always, so the command says why nothing goes and how to confirm the address (exit 6),
 * rather than that a link is on its way; once an admin signed in confirms it, the link goes.
 */
import { describe, expect, it } from "vitest";
import { errorOf, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

describe.each(MODES)("a reset link to an address a token set (%s)", (mode) => {
  const s = useInProcessSession(mode);

  it("is refused with the fix, and sent once an admin signed in confirms the address", async () => {
    const token = await s.run(["auth", "tokens", "create", "--name", "automation", "--json"]);
    expect(token.exitCode, show(token)).toBe(0);
    const env = { BIZCTL_TOKEN: json<{ token: string }>(token).token };
    // as a script with the token would: the resource itself (users create would also invite, which a token may not)
    const made = await s.run(
      [
        "resources",
        "create",
        "--type",
        "User",
        "--set",
        "userName=boss",
        "--set",
        'emails=[{"value":"boss@example.com","primary":true}]',
        "--set",
        'roles=[{"value":"admin"}]',
        "--json",
      ],
      { env },
    );
    expect(made.exitCode, show(made)).toBe(0);

    const refused = await s.run(["users", "reset-password", "boss"]);
    expect(refused.exitCode, show(refused)).toBe(6);
    expect(errorOf(refused)).toMatchObject({ code: "reset_address_unconfirmed" });
    expect(errorOf(refused).message).toMatch(/API token/);
    expect(refused.stderr).toContain("bizctl users update boss");

    const confirmed = await s.run([
      "users",
      "update",
      "boss",
      "--set",
      'emails=[{"value":"boss@example.com","primary":true}]',
    ]);
    expect(confirmed.exitCode, show(confirmed)).toBe(0);
    const sent = await s.run(["users", "reset-password", "boss"]);
    expect(sent.exitCode, show(sent)).toBe(0);
    expect(sent.stderr).toContain("queued to boss@example.com");
  });
});
