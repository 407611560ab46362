/**
 * Runs commands in this process: `run(argv, io)` of src/main.ts with stdout and stderr captured,
 * stdin given as text, the environment handed in (nothing of this process's), and stdout, stderr
 * and stdin a terminal or not. An embedded command builds the real app on the sandbox's data dir
 * and calls it through the inject transport, as the binary does; a remote one calls a real
 * `server start` over HTTP. What only a real process shows (exit by a signal, a pseudo-terminal's
 * prompts, the working directory, what a server writes to fd 2) stays with the binary: cli.ts.
 */
import { PassThrough, Writable } from "node:stream";
import { afterAll, beforeAll, expect } from "vitest";
import { run } from "../../src/main.js";
import {
  type CliResult,
  cleanEnv,
  type Env,
  initAndLogin,
  type Mode,
  type RunOptions,
  recorded,
  type Session,
  type SessionOptions,
  show,
} from "./cli.js";

export interface InProcessOptions extends RunOptions {
  /** stdin, stdout and stderr are a terminal (isTTY), of `columns` columns (default 100) */
  tty?: boolean;
  columns?: number;
}

/** A stream that keeps what is written to it, a terminal or not. */
class Captured extends Writable {
  private readonly chunks: Buffer[] = [];
  constructor(
    readonly isTTY: boolean,
    readonly columns: number | undefined,
  ) {
    super();
  }
  override _write(chunk: Buffer | string, encoding: BufferEncoding, done: () => void): void {
    this.chunks.push(typeof chunk === "string" ? Buffer.from(chunk, encoding) : chunk);
    done();
  }
  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}

/** `bizctl ARGS` in this process; the result as the binary's (exit code, stdout, stderr). */
export async function runInProcess(args: string[], options: InProcessOptions = {}): Promise<CliResult> {
  if (options.cwd !== undefined) throw new Error("the working directory is the process's: test it with bizctl()");
  const tty = options.tty === true;
  // stdin ends where the text does; without one it is empty at once, as /dev/null is
  const stdin = Object.assign(new PassThrough(), { isTTY: tty });
  stdin.end(options.input ?? "");
  const stdout = new Captured(tty, tty ? (options.columns ?? 100) : undefined);
  const stderr = new Captured(tty, undefined);
  const exitCode = await run(["node", "bizctl", ...args], { stdin, stdout, stderr, env: options.env ?? cleanEnv() });
  return recorded({ args, exitCode, stdout: stdout.text(), stderr: stderr.text() }, tty ? " (terminal)" : "");
}

export type InProcessSession = Session<InProcessOptions>;

/** initAndLogin() with every command run in this process. */
export function inProcessSession(
  mode: Mode = "embedded",
  options: Omit<SessionOptions<InProcessOptions>, "runner"> = {},
): Promise<InProcessSession> {
  return initAndLogin(mode, { ...options, runner: runInProcess });
}

/**
 * A support user `userName` made by the session's admin with a temporary password, logged in (the
 * password changed at that first login) in a config dir of its own: that dir's environment.
 */
export async function signedInSupport(s: InProcessSession, userName: string): Promise<Env> {
  const temporary = "ochre violin summit 4478 tundra";
  const created = await s.run(["users", "create", "--user-name", userName, "--role", "support", "--password-stdin"], {
    input: `${temporary}\n`,
  });
  expect(created.exitCode, show(created)).toBe(0);
  const env = await s.newConfig(userName);
  const login = await s.login(env, userName, temporary, "velvet harbour quartz 6620 meadow");
  expect(login.exitCode, show(login)).toBe(0);
  return env;
}

/**
 * The in-process session of one describe block: started (initialised and logged in) before its
 * first test, closed after its last. Its members are there inside tests and hooks, once it has
 * started; hooks declared after this call see it started.
 */
export function useInProcessSession(
  mode: Mode = "embedded",
  options: Omit<SessionOptions<InProcessOptions>, "runner"> = {},
  timeoutMs?: number,
): InProcessSession {
  return useStartedSession(() => inProcessSession(mode, options), timeoutMs);
}

/** A session that `start` makes, started before the describe block's first test and closed after its last. */
export function useStartedSession(start: () => Promise<InProcessSession>, timeoutMs?: number): InProcessSession {
  let session: InProcessSession | undefined;
  beforeAll(async () => {
    session = await start();
  }, timeoutMs);
  afterAll(async () => session?.close());
  const started = () => {
    if (!session) throw new Error("the session starts in beforeAll: use it inside a test or a hook");
    return session;
  };
  // every member read or written goes to the started session (a test may update its password)
  return new Proxy({} as InProcessSession, {
    get: (_target, key) => Reflect.get(started(), key),
    set: (_target, key, value) => Reflect.set(started(), key, value),
  });
}

// ---------------------------------------------------------------------------------------------
// tables of scenarios

/** What a stream must hold: exactly this text, a match of this pattern, or what this function checks. */
export type Want = string | RegExp | ((text: string, result: CliResult) => void);

export interface Scenario {
  name: string;
  args: string[];
  /** run on a terminal (stdin, stdout and stderr) */
  tty?: boolean;
  columns?: number;
  stdin?: string;
  env?: Env;
  wantExit: number;
  wantStdout?: Want;
  wantStderr?: Want;
}

function expectWant(text: string, want: Want | undefined, result: CliResult): void {
  if (want === undefined) return;
  if (typeof want === "string") expect(text, show(result)).toBe(want);
  else if (want instanceof RegExp) expect(text, show(result)).toMatch(want);
  else want(text, result);
}

/** Runs a scenario in the session and checks its exit code and what it wrote; returns the result. */
export async function expectScenario(session: Pick<InProcessSession, "run">, scenario: Scenario): Promise<CliResult> {
  const result = await session.run(scenario.args, {
    tty: scenario.tty,
    columns: scenario.columns,
    input: scenario.stdin,
    env: scenario.env,
  });
  expect(result.exitCode, show(result)).toBe(scenario.wantExit);
  expectWant(result.stdout, scenario.wantStdout, result);
  expectWant(result.stderr, scenario.wantStderr, result);
  return result;
}

/** The same scenario piped and on a terminal: `[piped, terminal]`, named for the table. */
export function pipedAndTerminal(
  name: string,
  args: string[],
  piped: Omit<Scenario, "name" | "args" | "tty">,
  terminal: Omit<Scenario, "name" | "args" | "tty">,
): Scenario[] {
  return [
    { name: `${name} (piped)`, args, ...piped },
    { name: `${name} (terminal)`, args, tty: true, ...terminal },
  ];
}
