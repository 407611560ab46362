/**
 * Prompts through a real pseudo-terminal (test/fixtures/pty-run.py): stdin, stdout and stderr
 * of the CLI are a terminal, so it prompts, masks passwords and prints tables.
 */
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN,
  BIN,
  bizctl,
  type Env,
  json,
  leaksOf,
  MODES,
  makeSandbox,
  PASSWORD,
  ROOT,
  type RunningServer,
  type Sandbox,
  show,
  startServer,
  transcript,
} from "../helpers/cli.js";

const PTY_RUN = join(ROOT, "test", "fixtures", "pty-run.py");

interface Step {
  expect: string;
  send?: string;
  enter?: boolean;
}

interface PtyResult {
  exitCode: number;
  output: string;
  raw: string;
  error?: string;
}

let python: string;

async function findPython(): Promise<string> {
  // resolved with the parent's environment (a pyenv shim needs it); runs get a clean one
  const found = await execa("python3", ["-c", "import sys; print(sys.executable)"], { reject: false });
  if (found.exitCode !== 0) throw new Error("python3 is needed for the pseudo-terminal tests");
  return found.stdout.trim();
}

async function inTerminal(env: Env, args: string[], script: Step[]): Promise<PtyResult> {
  const result = await execa(python, [PTY_RUN, JSON.stringify(script), "node", BIN, ...args], {
    cwd: ROOT,
    reject: false,
    extendEnv: false,
    env: { ...env, TERM: "xterm-256color" },
    timeout: 60_000,
  });
  if (result.exitCode !== 0) throw new Error(`pty-run.py failed: ${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as PtyResult;
  transcript.push({ what: `bizctl ${args.join(" ")} (terminal)`, text: parsed.raw });
  return parsed;
}

describe.each(MODES)("prompts on a terminal (%s)", (mode) => {
  let sandbox: Sandbox;
  let server: RunningServer | undefined;
  let env: Env;
  let oneTimePassword: string;

  beforeAll(async () => {
    python ??= await findPython();
    sandbox = await makeSandbox();
    env = sandbox.env;
    const init = await bizctl(["server", "init", "--admin-user", ADMIN], { env });
    expect(init.exitCode, show(init)).toBe(0);
    oneTimePassword = json(init).oneTimePassword;
    if (mode === "remote") {
      server = await startServer(sandbox.dataDir, { env });
      const added = await bizctl(["profile", "add", "r", "--server", server.url, "--use"], { env });
      expect(added.exitCode, show(added)).toBe(0);
    }
  });
  afterAll(async () => {
    await server?.stop();
    await sandbox?.remove();
  });

  it("auth login asks for the user name and the password (masked), then for a new one on a first login", async () => {
    const result = await inTerminal(
      env,
      ["auth", "login"],
      [
        { expect: "User name", send: ADMIN },
        { expect: "Password", send: oneTimePassword },
        // too short: refused as it is typed, before it is asked again (the text kept, erased here)
        { expect: "New password", send: "too short" },
        { expect: "must have at least 15 characters (it has 9)", send: `${"\u007f".repeat(9)}${oneTimePassword}` },
        // what only the server knows (the current password) is refused after, and asked for again
        { expect: "Repeat it", send: oneTimePassword },
        { expect: "must differ from the current one" },
        { expect: "Try another" },
        { expect: "New password", send: PASSWORD },
        { expect: "Repeat it", send: PASSWORD },
        { expect: "Password changed" },
      ],
    );
    expect(result.output).toContain("at least 15 characters");
    expect(result.error, result.output).toBeUndefined();
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toContain(`as ${ADMIN} (admin)`);
    expect(result.output).toContain("temporary");
    // the password prompts show a mask, never the password
    expect(result.output).toMatch(/Password \*{5,}/);
    expect(result.raw).not.toContain(oneTimePassword);
    expect(result.raw).not.toContain(PASSWORD);

    const status = await bizctl(["auth", "status", "--json"], { env });
    expect(status.exitCode, show(status)).toBe(0);
    expect(json(status)).toMatchObject({ user: ADMIN, credentialSource: "profile" });
    const firstLogin = await bizctl(["auth", "first-login"], { env });
    expect(json(firstLogin).firstLogin).toBe(false);
  });

  it("events create asks for the missing name and start, and prints a table", async () => {
    const result = await inTerminal(
      env,
      ["events", "create", "--set", "code=PTY-1"],
      [
        { expect: "Name", send: "Typed at a terminal" },
        { expect: "Starts at", send: "2027-05-01T10:00:00+02:00" },
        { expect: "Created event PTY-1" },
      ],
    );
    expect(result.error, result.output).toBeUndefined();
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toMatch(/name +Typed at a terminal\r?\n/);
    const event = await bizctl(["events", "get", "PTY-1"], { env });
    expect(json(event)).toMatchObject({ code: "PTY-1", name: "Typed at a terminal", startsAt: "2027-05-01T08:00:00Z" });
  });

  it("events delete asks for confirmation; no keeps the event, yes deletes it", async () => {
    const kept = await inTerminal(env, ["events", "delete", "PTY-1"], [{ expect: "Delete event PTY-1", send: "n" }]);
    expect(kept.error, kept.output).toBeUndefined();
    expect(kept.exitCode, kept.output).toBe(2);
    expect((await bizctl(["events", "get", "PTY-1"], { env })).exitCode).toBe(0);

    const deleted = await inTerminal(
      env,
      ["events", "delete", "PTY-1"],
      [{ expect: "Delete event PTY-1", send: "y" }, { expect: "Deleted event PTY-1" }],
    );
    expect(deleted.exitCode, deleted.output).toBe(0);
    expect((await bizctl(["events", "get", "PTY-1"], { env })).exitCode).toBe(3);
  });

  it("Ctrl-C at a prompt exits 130 and creates nothing", async () => {
    const result = await inTerminal(
      env,
      ["events", "create", "--set", "code=PTY-2"],
      [{ expect: "Name", send: "\u0003", enter: false }],
    );
    expect(result.error, result.output).toBeUndefined();
    expect(result.exitCode, result.output).toBe(130);
    expect((await bizctl(["events", "get", "PTY-2"], { env })).exitCode).toBe(3);
  });

  it("reports an error as one readable line on a terminal", async () => {
    const result = await inTerminal(env, ["events", "get", "NO-SUCH-EVENT"], []);
    expect(result.exitCode, result.output).toBe(3);
    const lines = result.output.split(/\r?\n/).filter((l) => l.trim());
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: .*NO-SUCH-EVENT/);
    expect(result.output).not.toContain("{");
  });

  it("never shows a password outside the init output", () => {
    expect(leaksOf(PASSWORD)).toEqual([]);
    expect(
      leaksOf(oneTimePassword, (what) => what.startsWith("bizctl server init") && what.endsWith("(stdout)")),
    ).toEqual([]);
  });
});
