/**
 * Runs the real CLI binary (`node bin/bizctl.js`, built by `npm run build`) in isolated
 * directories with a clean environment, and starts real servers on ephemeral ports.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll } from "vitest";
import { prepareRecordedAnswersCheck, recordedAnswersOutside } from "./openapi-check.js";

export const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const BIN = join(ROOT, "bin", "bizctl.js");

/** A password the policy accepts (>= 15 characters, not common, no user name in it). */
export const PASSWORD = "correct horse battery staple 42";

/** The argv of `events create` for an event of this code, name and start (the quick start's day by default). */
export const createEventArgv = (code: string, name: string, startsAt = "2027-01-10T09:00:00Z") => [
  "events",
  "create",
  "--set",
  `code=${code}`,
  "--set",
  `name=${name}`,
  "--set",
  `startsAt=${startsAt}`,
];
export const ADMIN = "admin";

/** A case of an import test: a file of this name and content, imported with `args`, exits `exit`. */
export interface ImportFileScenario {
  name: string;
  file: string;
  content: string;
  args?: string[];
  exit: number;
}

export type Mode = "embedded" | "remote";
export const MODES: Mode[] = ["embedded", "remote"];

export type Env = Record<string, string>;

export interface CliResult {
  args: string[];
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Env;
  /** stdin; without it stdin is /dev/null (no terminal, nothing to read) */
  input?: string;
  timeoutMs?: number;
  /** the working directory (default: the repository) */
  cwd?: string;
  /** a command line the binary runs under (`setpriv ...`); `node bin/bizctl.js ARGS` is appended */
  via?: string[];
}

/** Every output seen in this test file (CLI runs and server logs), for the "no secret leaks" checks. */
export const transcript: { what: string; text: string }[] = [];

/** The environment every run gets: nothing inherited but PATH (no BIZCTL_*, no HOME of the user). */
export function cleanEnv(extra: Env = {}): Env {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", ...extra };
}

/** Runs one command line: the binary (bizctl) or run() in this process (in-process.ts). */
export type Runner<O extends RunOptions = RunOptions> = (args: string[], options?: O) => Promise<CliResult>;

/** Keeps a run's output for the leak checks; returns the result. */
export function recorded(result: CliResult, how = ""): CliResult {
  const command = `bizctl ${result.args.join(" ")}${how}`;
  transcript.push({ what: `${command} (stdout)`, text: result.stdout });
  transcript.push({ what: `${command} (stderr)`, text: result.stderr });
  return result;
}

export async function bizctl(args: string[], options: RunOptions = {}): Promise<CliResult> {
  const [program, ...programArgs] = [...(options.via ?? []), "node", BIN, ...args] as [string, ...string[]];
  const result = await execa(program, programArgs, {
    cwd: options.cwd ?? ROOT,
    reject: false,
    extendEnv: false,
    env: options.env ?? cleanEnv(),
    ...(options.input === undefined ? { stdin: "ignore" as const } : { input: options.input }),
    stripFinalNewline: false,
    timeout: options.timeoutMs ?? 30_000,
  });
  const out = recorded({
    args,
    exitCode: result.exitCode ?? -1,
    stdout: String(result.stdout ?? ""),
    stderr: String(result.stderr ?? ""),
  });
  if (result.timedOut) throw new Error(`bizctl ${args.join(" ")} timed out\n${out.stderr}`);
  return out;
}

/** The outputs (CLI runs, server logs) that contain the secret. */
export function leaksOf(secret: string, except: (what: string) => boolean = () => false): string[] {
  return transcript.filter((t) => t.text.includes(secret) && !except(t.what)).map((t) => t.what);
}

/** stdout parsed as JSON; fails with the whole result when it is not. */
// biome-ignore lint/suspicious/noExplicitAny: the tests assert the shape with expect()
export function json<T = any>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`stdout of 'bizctl ${result.args.join(" ")}' is not JSON:\n${result.stdout}\n${result.stderr}`);
  }
}

export interface ErrorReport {
  code: string;
  status?: number;
  message: string;
  requestId?: string;
  hint?: string;
  exitCode: number;
  errors?: { path: string; message: string }[];
  /** what the command said before it failed */
  messages?: string[];
}

/** stderr must be exactly one JSON object `{"error":{...}}` (stderr is not a terminal in tests). */
export function errorOf(result: CliResult): ErrorReport {
  const lines = result.stderr.split("\n").filter((l) => l.trim() !== "");
  if (lines.length !== 1) {
    throw new Error(`stderr of 'bizctl ${result.args.join(" ")}' is not one line:\n${result.stderr}`);
  }
  const parsed = JSON.parse(lines[0]!) as { error?: ErrorReport };
  if (!parsed.error || typeof parsed.error.code !== "string" || Object.keys(parsed).length !== 1) {
    throw new Error(`stderr is not {"error":{code,...}}: ${lines[0]}`);
  }
  return parsed.error;
}

/** A short description of a result for assertion messages. */
export function show(result: CliResult): string {
  return `bizctl ${result.args.join(" ")} → ${result.exitCode}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

// ---------------------------------------------------------------------------------------------
// sandboxes: a temporary HOME with its own config and data dirs

export interface Sandbox {
  root: string;
  configDir: string;
  dataDir: string;
  env: Env;
  remove(): Promise<void>;
}

const SHARED_CACHE = join(tmpdir(), "bizctl-e2e-cache");

export async function makeSandbox(): Promise<Sandbox> {
  const root = await mkdtemp(join(tmpdir(), "bizctl-e2e-"));
  const configDir = join(root, "config");
  const dataDir = join(root, "data");
  return {
    root,
    configDir,
    dataDir,
    // one code cache for every sandbox (test/e2e/code-cache.test.ts gives its own): the sandbox's
    // HOME holds only what the test put there, and each run need not write a cache of its own
    env: cleanEnv({ HOME: root, BIZCTL_CONFIG_DIR: configDir, BIZCTL_DATA_DIR: dataDir, XDG_CACHE_HOME: SHARED_CACHE }),
    remove: () => rm(root, { recursive: true, force: true }),
  };
}

// ---------------------------------------------------------------------------------------------
// a real server

export interface RunningServer {
  url: string;
  process: ChildProcess;
  /** its stdout (pino JSON logs) and stderr so far */
  logs(): string;
  /** SIGTERM, then waits for the exit; resolves with the exit code */
  stop(): Promise<number | null>;
}

const LISTENING = /bizctl server listening on (http:\/\/127\.0\.0\.1:\d+)/;

/** Loaded into each server process: it records the answers the server sends (answer-recorder.mjs). */
const ANSWER_RECORDER = pathToFileURL(join(ROOT, "test", "helpers", "answer-recorder.mjs")).href;
let answerLogs = 0;

/**
 * Holds the answers a server process recorded to /openapi.json, as the in-process test servers'
 * answers are held (openapi-check.ts): throws, naming each, when one is outside it.
 */
async function assertAnswersDocumented(answerLog: string): Promise<void> {
  const text = await readFile(answerLog, "utf8").catch(() => "");
  await rm(answerLog, { force: true });
  const problems = await recordedAnswersOutside(text);
  if (problems.length > 0) {
    throw new Error(`answers of the server outside the OpenAPI document:\n${problems.map((p) => `- ${p}`).join("\n")}`);
  }
}

export function startServer(dataDir: string, options: { env?: Env; args?: string[] } = {}): Promise<RunningServer> {
  prepareRecordedAnswersCheck();
  const answerLog = join(tmpdir(), `bizctl-answers-${process.pid}-${++answerLogs}.jsonl`);
  const args = ["--import", ANSWER_RECORDER, BIN, "server", "start", "--port", "0", "--data-dir", dataDir];
  const child = spawn("node", [...args, ...(options.args ?? [])], {
    cwd: ROOT,
    env: { ...(options.env ?? cleanEnv({ HOME: dataDir })), BIZCTL_TEST_ANSWER_LOG: answerLog },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const record = { what: `server on ${dataDir}`, text: "" };
  transcript.push(record);
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    record.text = stdout + stderr;
  });
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the server did not start in time:\n${stderr}`));
    }, 20_000);
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      record.text = stdout + stderr;
      const match = LISTENING.exec(stderr);
      if (match && timer) {
        clearTimeout(timer);
        resolvePromise({
          url: match[1]!,
          process: child,
          logs: () => stdout + stderr,
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
            const code = await exited;
            await assertAnswersDocumented(answerLog);
            return code;
          },
        });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before listening:\n${stderr}`));
    });
  });
}

/** The JSON lines (pino) a server has logged so far, parsed; its other output is left out. */
export function logLinesOf<T = Record<string, unknown>>(server: RunningServer): T[] {
  return server
    .logs()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as T);
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

// ---------------------------------------------------------------------------------------------
// a logged-in session in one of the two modes

export interface Session<O extends RunOptions = RunOptions> {
  mode: Mode;
  sandbox: Sandbox;
  /** the remote server (remote mode only) */
  server?: RunningServer;
  /** the environment of the logged-in config dir */
  env: Env;
  userName: string;
  userId: string;
  /** the current password (tests that change it update this) */
  password: string;
  /** runs bizctl with this session's environment (plus `env` additions) */
  run(args: string[], options?: O): Promise<CliResult>;
  /** `auth login --password-stdin` with the config dir of `env`, as login() below */
  login(env: Env, userName: string, password: string, extraLine?: string): Promise<CliResult>;
  /** a second config dir in the same sandbox, pointed at the same server (not logged in) */
  newConfig(name: string): Promise<Env>;
  close(): Promise<void>;
}

/** Points the config dir of `env` at the session's server: in remote mode a current profile `r`. */
async function pointAt(mode: Mode, env: Env, server: RunningServer | undefined, runner: Runner): Promise<void> {
  if (mode !== "remote") return;
  const added = await runner(["profile", "add", "r", "--server", server!.url, "--use"], { env });
  if (added.exitCode !== 0) throw new Error(`profile add failed: ${show(added)}`);
}

export async function login(
  env: Env,
  userName: string,
  password: string,
  extraLine?: string,
  runner: Runner = bizctl,
): Promise<CliResult> {
  const input = `${password}\n${extraLine === undefined ? "" : `${extraLine}\n`}`;
  return runner(["auth", "login", "--user", userName, "--password-stdin"], { env, input });
}

/**
 * `server init --admin-user admin --password-stdin` (PASSWORD) with this environment and storage
 * flags: what `server start` and the embedded CLI require before they serve a data dir.
 */
export async function initDataDir(
  env: Env,
  args: string[] = [],
  options: { userName?: string; password?: string; runner?: Runner } = {},
): Promise<{ id: string }> {
  const { userName = ADMIN, password = PASSWORD, runner = bizctl } = options;
  const init = await runner(["server", "init", "--admin-user", userName, "--password-stdin", ...args], {
    env,
    input: `${password}\n`,
  });
  if (init.exitCode !== 0) throw new Error(`server init failed: ${show(init)}`);
  return json<{ id: string }>(init);
}

export interface SessionOptions<O extends RunOptions = RunOptions> {
  userName?: string;
  password?: string;
  login?: boolean;
  /** what runs the commands (default: the binary) */
  runner?: Runner<O>;
  /**
   * another store than the sandbox's SQLite file: flags of `server init` and `server start`, their
   * environment; as a function, made for the new sandbox before `server init`
   */
  storage?: Storage | ((sandbox: Sandbox) => Promise<Storage>);
  /** more flags of `server init` (after --admin-user and --password-stdin) */
  initArgs?: string[];
  /** runs after `server init`, before the server starts and the login */
  afterInit?: (sandbox: Sandbox) => Promise<void>;
  /** more flags of `server start` (remote mode); a function is called when the server starts */
  serverArgs?: string[] | (() => string[] | Promise<string[]>);
}

export interface Storage {
  args: string[];
  env?: Env;
  drop(): Promise<void>;
}

/**
 * `server init --password-stdin` (a strong password, not temporary) on a fresh sandbox; in remote
 * mode a server on the same data dir and a current profile `r` pointing at it; then
 * `auth login --password-stdin`.
 */
export async function initAndLogin<O extends RunOptions = RunOptions>(
  mode: Mode = "embedded",
  options: SessionOptions<O> = {},
): Promise<Session<O>> {
  const { userName = ADMIN, password = PASSWORD } = options;
  const runner = (options.runner ?? bizctl) as Runner<O>;
  const made = await makeSandbox();
  let storage: Storage | undefined;
  const removeAll = async () => {
    await made.remove();
    await storage?.drop();
  };
  let server: RunningServer | undefined;
  try {
    storage = typeof options.storage === "function" ? await options.storage(made) : options.storage;
    const sandbox = { ...made, env: { ...made.env, ...storage?.env } };
    const args = storage?.args ?? [];
    const init = { userName, password, runner: runner as Runner };
    const { id: userId } = await initDataDir(sandbox.env, [...args, ...(options.initArgs ?? [])], init);
    await options.afterInit?.(sandbox);
    if (mode === "remote") {
      const serverArgs = typeof options.serverArgs === "function" ? await options.serverArgs() : options.serverArgs;
      server = await startServer(sandbox.dataDir, { env: sandbox.env, args: [...args, ...(serverArgs ?? [])] });
    }
    const running = server;
    const session: Session<O> = {
      mode,
      sandbox,
      server: running,
      env: sandbox.env,
      userName,
      userId,
      password,
      run: (args, runOptions) => runner(args, { ...runOptions, env: { ...sandbox.env, ...runOptions?.env } } as O),
      login: (env, name, secret, extraLine) => login(env, name, secret, extraLine, runner as Runner),
      newConfig: async (name) => {
        const configDir = join(sandbox.root, name);
        await mkdir(configDir, { recursive: true });
        const env = { ...sandbox.env, BIZCTL_CONFIG_DIR: configDir };
        await pointAt(mode, env, running, runner as Runner);
        return env;
      },
      close: async () => {
        // the stop throws when the server sent an answer outside the OpenAPI document: the
        // sandbox and its database go all the same
        try {
          await running?.stop();
        } finally {
          await removeAll();
        }
      },
    };
    await pointAt(mode, sandbox.env, running, runner as Runner);
    if (options.login !== false) {
      const result = await session.login(sandbox.env, userName, password);
      if (result.exitCode !== 0) throw new Error(`auth login failed: ${show(result)}`);
    }
    return session;
  } catch (error) {
    // nothing left behind when the set-up fails (afterAll has no session to close)
    await server?.stop();
    await removeAll();
    throw error;
  }
}

/**
 * initAndLogin() in a beforeAll of the describe block it is called in, and its close() in an
 * afterAll: the session returned is filled in once that beforeAll has run.
 */
export function useSession<O extends RunOptions = RunOptions>(
  mode: Mode = "embedded",
  options: SessionOptions<O> = {},
): Session<O> {
  const session = {} as Session<O>;
  beforeAll(async () => {
    Object.assign(session, await initAndLogin(mode, options));
  }, 120_000);
  afterAll(async () => {
    await session.close?.();
  });
  return session;
}

/** useSession() in remote mode: an installation with its server started. */
export function useServer(options: SessionOptions = {}): Session & { server: RunningServer } {
  return useSession("remote", options) as Session & { server: RunningServer };
}

/** The bearer token of a login over HTTP (`POST /auth/login`), no CLI involved. */
export async function apiToken(server: { url: string }, userName = ADMIN, password = PASSWORD): Promise<string> {
  const response = await httpJson(server, "POST", "/auth/login", { userName, password });
  if (response.status !== 200)
    throw new Error(`login of ${userName} answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { token: string }).token;
}

/** A JSON request to a running server, with a Bearer token when given (real HTTP, no client of ours). */
export function httpJson(
  server: { url: string },
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { ...(body !== undefined && { "content-type": "application/json" }), ...headers },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

export const bearerHeader = (token: string) => ({ authorization: `Bearer ${token}` });
