import { describe, expect, it } from "vitest";
import { errorOf, json, MODES, show, useSession } from "../helpers/cli.js";
import { inTerminal } from "../helpers/pty.js";

/** Issue 15 part 8: a prompt checks the answer against the contract's schema and asks again, keeping the text. */

describe.each(MODES)("prompts check each answer (%s)", (mode) => {
  const s = useSession(mode);

  it("on a terminal, 'tomorrow' is refused at the prompt and the typed text is kept to fix", async () => {
    const result = await inTerminal(
      { ...s.env, NO_COLOR: "1" },
      ["events", "create", "--set", "code=PROMPT-1"],
      [
        { expect: "Name", send: "Typed first" },
        { expect: "Starts at", send: "tomorrow" },
        { expect: "must be an RFC 3339 date-time", send: "\u007f".repeat("tomorrow".length) },
        // the zone is missing: refused again, and only the zone is typed to complete what is kept
        { expect: "must be an RFC 3339 date-time", send: "2027-05-01T10:00:00", enter: true },
        { expect: "must be an RFC 3339 date-time", send: "Z" },
        { expect: "Created event PROMPT-1" },
      ],
    );
    expect(result.error, result.output).toBeUndefined();
    expect(result.exitCode, result.output).toBe(0);
    const event = await s.run(["events", "get", "PROMPT-1"]);
    expect(json(event)).toMatchObject({ name: "Typed first", startsAt: "2027-05-01T10:00:00Z" });
  });

  it("on a terminal, a user name the schema refuses (over 256 characters) is refused at the 'User name' prompt", async () => {
    const name = "x".repeat(256);
    const result = await inTerminal(
      { ...s.env, NO_COLOR: "1" },
      ["users", "create", "--role", "member"],
      [
        { expect: "User name", send: `${name}y` },
        // the typed text is kept: one backspace makes it fit
        { expect: "must NOT have more than 256 characters", send: "\u007f" },
      ],
    );
    expect(result.error, result.output).toBeUndefined();
    expect(result.exitCode, result.output).toBe(0);
    const user = await s.run(["users", "get", name, "--json"]);
    expect(json(user)).toMatchObject({ userName: name });
  });

  it("on a terminal, a too-short new password is refused at the first entry, before 'Repeat it'", async () => {
    const withName = `the ${s.userName} passphrase 123`;
    const result = await inTerminal(
      { ...s.env, NO_COLOR: "1" },
      ["auth", "change-password"],
      [
        { expect: "Current password", send: s.password },
        { expect: "New password", send: "short" },
        // the typed text is kept: backspaces take it away before the next try
        { expect: "must have at least 15 characters (it has 5)", send: `${"\u007f".repeat(5)}${withName}` },
        {
          expect: "must not contain the user name",
          send: `${"\u007f".repeat(withName.length)}a good long new passphrase 7`,
        },
        { expect: "Repeat it", send: "a good long new passphrase 7" },
        { expect: "Password changed" },
      ],
    );
    expect(result.error, result.output).toBeUndefined();
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output.indexOf("at least 15")).toBeLessThan(result.output.indexOf("Repeat it"));
    s.password = "a good long new passphrase 7";
  });

  it("piped, nothing is asked: a missing start names the flag and a bad one is refused by the server", async () => {
    const missing = await s.run(["events", "create", "--set", "code=PROMPT-2", "--set", "name=x"]);
    expect(missing.exitCode, show(missing)).toBe(2);
    expect(errorOf(missing).hint).toMatch(/--set startsAt=/);
    const bad = await s.run([
      "events",
      "create",
      "--set",
      "code=PROMPT-2",
      "--set",
      "name=x",
      "--set",
      "startsAt=tomorrow",
    ]);
    expect(bad.exitCode, show(bad)).toBe(7);
    expect(errorOf(bad).errors).toEqual([{ path: "/startsAt", message: expect.stringMatching(/date-time/) }]);
    expect((await s.run(["events", "get", "PROMPT-2"])).exitCode).toBe(3);
  });
});
