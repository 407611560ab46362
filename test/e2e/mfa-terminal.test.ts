/**
 * A person turns on a second factor at a terminal and logs in with it: `auth mfa enroll` draws the
 * key URI as a QR code, prints the key, takes the app's first code (typed here as an authenticator
 * app would compute it: python3's standard library in the pseudo-terminal runner) and prints the
 * recovery codes; `auth login` then asks for a code after the password, and takes a recovery
 * code too. `users mfa-reset`, the reset for a lost device, asks before it removes a factor. The
 * real binary in a pseudo-terminal, embedded (the piped and remote paths are in
 * test/commands/mfa.test.ts and test/commands/users-mfa-reset.test.ts).
 */
import qrcode from "qrcode";
import { describe, expect, it } from "vitest";
import { json, PASSWORD, show, useSession } from "../helpers/cli.js";
import { inTerminal } from "../helpers/pty.js";
import { codeOf } from "../helpers/totp.js";

describe("a second factor at a terminal (embedded)", () => {
  const s = useSession("embedded");

  it("enrolls with a QR code and the app's first code, then logs in with a code and a recovery code", async () => {
    const enrolled = await inTerminal(
      s.env,
      ["auth", "mfa", "enroll"],
      [
        { expect: "enter this key: " },
        { expect: "The app's code", send_totp: "enter this key: ([A-Z2-7]+)" },
        { expect: "shown this once" },
      ],
    );
    expect(enrolled.error, enrolled.output).toBeUndefined();
    expect(enrolled.exitCode, enrolled.output).toBe(0);
    // the QR code: rows of block characters, as wide as they are many
    const blocks = enrolled.output.split("\n").filter((line) => /^[ █▀▄]{21,}\s*$/.test(line));
    expect(blocks.length, enrolled.output).toBeGreaterThanOrEqual(10);
    const secret = /enter this key: ([A-Z2-7]+)/.exec(enrolled.output)![1]!;
    const recoveryCodes = enrolled.output.match(/^[a-z0-9]{4}(?:-[a-z0-9]{4}){3}\r?$/gim)?.map((c) => c.trim()) ?? [];
    expect(recoveryCodes, enrolled.output).toHaveLength(10);

    const status = await s.run(["auth", "mfa", "status", "--json"]);
    expect(status.exitCode, show(status)).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ enabled: true, recoveryCodesLeft: 10 });

    // the step after the one enrollment spent (one step of drift), as a phone a little ahead would show
    const code = codeOf(secret, Date.now() + 30_000);
    const loggedIn = await inTerminal(
      s.env,
      ["auth", "login", "--user", s.userName],
      [
        { expect: "Password", send: PASSWORD },
        { expect: "Authentication code", send: code },
        { expect: "Logged in to" },
      ],
    );
    expect(loggedIn.error, loggedIn.output).toBeUndefined();
    expect(loggedIn.exitCode, loggedIn.output).toBe(0);
    expect(loggedIn.raw).not.toContain(code);

    const recovered = await inTerminal(
      s.env,
      ["auth", "login", "--user", s.userName],
      [
        { expect: "Password", send: PASSWORD },
        // a mistyped code asks for the code again, not the password
        { expect: "Authentication code", send: "000000" },
        { expect: "That code is wrong, expired or already used; type the current one (2 tries left)." },
        { expect: "Authentication code", send: recoveryCodes[0]! },
        { expect: "Logged in to" },
        { expect: "9 recovery codes left" },
      ],
    );
    expect(recovered.error, recovered.output).toBeUndefined();
    expect(recovered.exitCode, recovered.output).toBe(0);
    const afterCode = recovered.output.slice(recovered.output.indexOf("Authentication code"));
    expect(afterCode, recovered.output).not.toContain("Password");
  });
});

/** The module rows a QR code drawn in half blocks shows: a foreground block is a dark module. */
function modulesOf(lines: string[]): boolean[][] {
  const rows: boolean[][] = [];
  for (const line of lines) {
    const chars = [...line];
    rows.push(chars.map((c) => c === "█" || c === "▀"));
    rows.push(chars.map((c) => c === "█" || c === "▄"));
  }
  return rows;
}

describe("the QR code reads on a dark and a light theme (embedded)", () => {
  const s = useSession("embedded");

  it.each([80, 200])(
    "is black modules on white with a quiet zone, the key's link beside it (%i columns)",
    async (columns) => {
      const started = await inTerminal(
        { ...s.env, PTY_COLUMNS: String(columns) },
        ["auth", "mfa", "enroll"],
        [{ expect: "The app's code", send: "\u0003", enter: false }],
      );
      expect(started.error, started.output).toBeUndefined();
      const uri = /key's link, for an app on this computer: (otpauth:\/\/\S+)\)/.exec(started.output)?.[1];
      expect(uri, started.output).toMatch(/^otpauth:\/\/totp\/.*secret=[A-Z2-7]+/);
      // every line of the code sets black on bright white itself, and resets at its end
      const drawn = started.raw.split(/\r?\n/).filter((line) => line.startsWith("\u001b[30m\u001b[107m"));
      expect(drawn.length, started.raw).toBeGreaterThan(10);
      const lines = drawn.map((line) => {
        expect(line.endsWith("\u001b[0m"), JSON.stringify(line)).toBe(true);
        return line.slice("\u001b[30m\u001b[107m".length, -"\u001b[0m".length);
      });
      const shown = modulesOf(lines);
      const { modules } = qrcode.create(uri!, { errorCorrectionLevel: "M" });
      // a quiet zone of 4 light modules on each side, then the code of the link itself
      expect(lines[0]!.length).toBe(modules.size + 8);
      for (const row of [0, 1, 2, 3]) expect(shown[row]!.some(Boolean)).toBe(false);
      for (let r = 0; r < modules.size; r++) {
        const row = shown[r + 4]!;
        expect(row.slice(0, 4).some(Boolean)).toBe(false);
        for (let c = 0; c < modules.size; c++) expect(row[c + 4], `module ${r},${c}`).toBe(Boolean(modules.get(r, c)));
      }
    },
  );
});

describe("users mfa-reset at a terminal (embedded)", () => {
  const s = useSession("embedded");
  const status = () => s.run(["auth", "mfa", "status", "--json"]);

  it("asks first: no keeps the factor, yes removes it and ends the sessions; the password alone logs in then", async () => {
    const enrolled = await s.run(["auth", "mfa", "enroll", "--json"]);
    expect(enrolled.exitCode, show(enrolled)).toBe(0);
    const { secret } = json<{ secret: string }>(enrolled);
    const verified = await s.run(["auth", "mfa", "verify", "--code-stdin"], { input: `${codeOf(secret)}\n` });
    expect(verified.exitCode, show(verified)).toBe(0);

    const reset = ["users", "mfa-reset", s.userName, "--reason", "lost phone, ticket 4711"];
    const kept = await inTerminal(s.env, reset, [{ expect: "Remove the second factor", send: "n" }]);
    expect(kept.error, kept.output).toBeUndefined();
    expect(kept.exitCode, kept.output).toBe(2);
    expect(json(await status())).toMatchObject({ enabled: true });

    const removed = await inTerminal(s.env, reset, [
      { expect: "Remove the second factor", send: "y" },
      { expect: "It logs in with its password alone" },
    ]);
    expect(removed.error, removed.output).toBeUndefined();
    expect(removed.exitCode, removed.output).toBe(0);
    expect(removed.output).toMatch(/1 session ended/);
    // the reset ended the session this profile held
    expect((await status()).exitCode).toBe(4);
    const again = await s.login(s.env, s.userName, PASSWORD);
    expect(again.exitCode, show(again)).toBe(0);
    expect(json(await status())).toMatchObject({ enabled: false });
  });
});
