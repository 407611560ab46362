/**
 * Runs the real CLI binary in a pseudo-terminal (test/fixtures/pty-run.py): stdin, stdout and
 * stderr are a terminal of 100 columns, so it prompts and prints tables.
 */
import { join } from "node:path";
import { execa } from "execa";
import { BIN, type Env, ROOT, transcript } from "./cli.js";

const PTY_RUN = join(ROOT, "test", "fixtures", "pty-run.py");

export interface Step {
  expect: string;
  send?: string;
  enter?: boolean;
  /** type the TOTP code of the base32 seed this pattern's group finds in the output so far */
  send_totp?: string;
}

export interface PtyResult {
  exitCode: number;
  /** the terminal's text, ANSI escapes removed (by the runner's own pattern) */
  output: string;
  /** exactly what the program wrote (the terminal turns each \n into \r\n) */
  raw: string;
  error?: string;
}

let python: string | undefined;

async function findPython(): Promise<string> {
  // resolved with the parent's environment (a pyenv shim needs it); runs get a clean one
  const found = await execa("python3", ["-c", "import sys; print(sys.executable)"], { reject: false });
  if (found.exitCode !== 0) throw new Error("python3 is needed for the pseudo-terminal tests");
  return found.stdout.trim();
}

export async function inTerminal(env: Env, args: string[], script: Step[] = []): Promise<PtyResult> {
  python ??= await findPython();
  const result = await execa(python, [PTY_RUN, JSON.stringify(script), "node", BIN, ...args], {
    cwd: ROOT,
    reject: false,
    extendEnv: false,
    env: { TERM: "xterm-256color", ...env },
    timeout: 60_000,
  });
  if (result.exitCode !== 0) throw new Error(`pty-run.py failed: ${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as PtyResult;
  transcript.push({ what: `bizctl ${args.join(" ")} (terminal)`, text: parsed.raw });
  return parsed;
}
