/**
 * Issues 14 (part 2) and 15: every example that a `--help` prints works as written against the
 * README's quick-start data (an admin, the event KICKOFF, a user jdoe), in both modes. Each
 * example runs through bash with the real binary on PATH as `bizctl`, on its own copy of the
 * seeded sandbox (and, remote, its own server on that copy), so examples that delete or create
 * do not depend on the order they run in. That server is the app listening on a loopback port in
 * the test's process (serveDataDir): the subject here is the CLI, which runs as a real process;
 * `server start` as a process is tested where it is the subject.
 */
import { chmod, cp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Command } from "commander";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processIO } from "../../src/cli/io.js";
import { buildProgram } from "../../src/main.js";
import {
  BIN,
  initAndLogin,
  MODES,
  type Mode,
  makeSandbox,
  PASSWORD,
  type Sandbox,
  type Session,
  show,
} from "../helpers/cli.js";
import { runInProcess } from "../helpers/in-process.js";
import { type ListeningApp, serveDataDir } from "../helpers/server.js";

const program = await buildProgram(processIO());

function walk(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  return [
    ...(path.length ? [{ path, command }] : []),
    ...command.commands.flatMap((sub) => walk(sub, [...path, sub.name()])),
  ];
}

/** The example lines of one `--help` (as `examples()` prints them: `  $ ...`, `\` continues). */
function examplesOf(command: Command): string[] {
  let text = "";
  command.configureOutput({
    writeOut: (s) => {
      text += s;
    },
  });
  command.outputHelp();
  const found: string[] = [];
  let open = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("  $ ")) found.push(line.slice(4));
    else if (open && line.trim() !== "") found[found.length - 1] += `\n${line}`;
    open = found.length > 0 && /\\$/.test(found[found.length - 1]!);
  }
  return found;
}

const EXAMPLES = [...new Set(walk(program).flatMap(({ command }) => examplesOf(command).map((example) => example)))];

/** Examples that cannot run in a test by their nature; each says why. */
const EXEMPT: Record<string, string> = {
  "bizctl auth login --user admin": "asks for the password at a terminal prompt",
  "bizctl --profile prod auth login --user admin": "asks for the password at a terminal prompt",
  "bizctl auth first-login": "asks for the passwords at a terminal prompt",
  "bizctl auth change-password": "asks for the passwords at a terminal prompt",
  "bizctl auth mfa verify": "asks for the app's code at a terminal prompt",
  "bizctl auth mfa disable": "asks for the password and a code at a terminal prompt",
  "bizctl server start --port 8080": "serves until stopped (test/helpers/cli.ts starts servers the same way)",
  "BIZCTL_SECRET_KEY_FILE=/etc/bizctl/secret BIZCTL_DATABASE_URL=postgres://bizctl@db/bizctl bizctl server start --host 0.0.0.0":
    "serves until stopped, on a PostgreSQL host and with a key file of the reader's",
  "BIZCTL_SECRET_KEY_FILE=/etc/bizctl/secret bizctl server start --database postgres://bizctl@db/bizctl --redis-url redis://cache:6379":
    "serves until stopped, on the reader's PostgreSQL and Redis hosts, with a key file of the reader's",
  "bizctl server start --require-mfa admin,support": "serves until stopped",
  "bizctl server start --metrics-port 9464": "serves until stopped (test/e2e/metrics.test.ts starts it)",
  "bizctl server migrate --database postgres://bizctl@db/bizctl": "names a PostgreSQL host of the reader's",
  "BIZCTL_SECRET_KEY_FILE=/etc/bizctl/secret bizctl server recover-admin --database postgres://bizctl@db/bizctl --admin-user <name>":
    "names a PostgreSQL host and a key file of the reader's",
  "bizctl events delete KICKOFF": "asks to confirm at a terminal (the next example passes --yes)",
  "bizctl audit tail --follow --filter 'outcome ne \"success\"'":
    "follows until Ctrl-C (test/e2e/audit.test.ts runs audit tail --follow)",
};

/** Placeholders filled from the seed; an example with any other `<...>` or `$VAR` is not runnable as is. */
const FILL: Record<string, string> = {
  "<user>": "jdoe",
  "<e-mail>": "jdoe@example.com",
  "<code>": "NO-SUCH-EVENT",
};

/** The shell variables the examples read, as the reader would have set them. */
const VARIABLES: Record<string, string> = { PASSWORD };

function prepared(example: string): string | undefined {
  let line = example;
  for (const [placeholder, value] of Object.entries(FILL)) line = line.replaceAll(placeholder, value);
  if (/<[a-z][\w-]*>/.test(line)) return undefined;
  const unset = [...line.matchAll(/\$([A-Z][A-Z_]*)/g)].filter((m) => !(m[1]! in VARIABLES));
  return unset.length ? undefined : line;
}

/** The reader's host paths, moved into the sandbox. */
function localized(line: string, dataDir: string, sandbox: Sandbox, url: string | undefined): string {
  return line
    .replaceAll("/var/lib/bizctl", dataDir)
    .replaceAll("/var/backups", join(sandbox.root, "backups"))
    .replaceAll("http://127.0.0.1:8080", url ?? "http://127.0.0.1:8080");
}

/** Commands that act on a data dir rather than through a profile run once, embedded. */
const localOnly = (line: string) => /\bbizctl server\b/.test(line) || /\bcompletion\b/.test(line);
/** An example that talks HTTP to a server of its own runs against the remote mode's server only. */
const remoteOnly = (line: string) => line.includes("http://127.0.0.1:8080");

const RUNNABLE = EXAMPLES.filter((e) => !(e in EXEMPT));

describe("the examples list", () => {
  it("has examples, and every exempt entry is still an example", () => {
    expect(EXAMPLES.length).toBeGreaterThan(50);
    for (const exempt of Object.keys(EXEMPT)) expect(EXAMPLES).toContain(exempt);
    // most run as written; the rest wait on a value only the reader has, marked <like-this> or $LIKE_THIS
    expect(RUNNABLE.filter((e) => prepared(e) !== undefined).length).toBeGreaterThanOrEqual(75);
  });
});

/** A few at a time: each run starts node (and, remote, an app in this process) on 2 shared cores. */
function limiter(size: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    while (active >= size) await new Promise<void>((go) => waiting.push(go));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}
const slot = limiter(3);

describe.each(MODES)("every --help example works as written (%s)", (mode: Mode) => {
  let template: Session;
  let shim: string;

  beforeAll(async () => {
    // the seed is not the subject: its commands run in this process (the examples run the binary)
    template = await initAndLogin(mode, { runner: runInProcess });
    const run = async (args: string[]) => {
      const result = await template.run(args);
      if (result.exitCode !== 0) throw new Error(show(result));
    };
    // the quick start's event, and the user the examples name
    await run([
      "events",
      "create",
      "--set",
      "code=KICKOFF",
      "--set",
      "name=Kick-off",
      "--set",
      "startsAt=2027-01-10T09:00:00Z",
    ]);
    await run(["users", "create", "--user-name", "jdoe", "--email", "jdoe@example.com", "--role", "member"]);
    // the groups and service accounts the examples name, and the members they add
    for (const name of ["alice", "bob"]) await run(["users", "create", "--user-name", name, "--role", "member"]);
    await run(["groups", "create", "Help Desk", "--role", "support"]);
    // the deleted user that users restore and users purge name, kept by the default retention
    await run(["users", "create", "--user-name", "leaver", "--role", "member"]);
    await run(["users", "delete", "leaver", "--yes"]);
    // the deleted group that groups restore and groups purge name
    await run(["groups", "create", "Old Team", "--role", "member"]);
    await run(["groups", "delete", "Old Team", "--yes"]);
    await run(["service-accounts", "create", "okta-provisioning", "--role", "admin"]);
    await run(["service-accounts", "token-create", "okta-provisioning", "--name", "Okta"]);
    // token credentials, approved by the admin, for the examples that sign with them (oauth whoami, oauth call)
    const consumer = await template.run(["oauth", "consumers", "create", "--name", "Examples", "--json"]);
    if (consumer.exitCode !== 0) throw new Error(show(consumer));
    const { consumerKey, consumerSecret } = JSON.parse(String(consumer.stdout)) as Record<string, string>;
    const flow = await template.run(["oauth", "flow", "--consumer-key", consumerKey!, "--consumer-secret-stdin"], {
      input: `${consumerSecret}\n`,
    });
    if (flow.exitCode !== 0) throw new Error(show(flow));
    // the profiles the examples switch to, pointed at the same data
    const target = mode === "remote" ? template.server!.url : "embedded";
    await run(["profile", "add", "prod", "--server", target]);
    // staging: a second deployment, empty, for the export | import example
    const staging = join(template.sandbox.root, "staging-data");
    const init = await template.run(
      ["server", "init", "--data-dir", staging, "--admin-user", "admin", "--password-stdin"],
      {
        input: `${PASSWORD}\n`,
      },
    );
    if (init.exitCode !== 0) throw new Error(show(init));
    await run(["profile", "add", "staging", "--server", "embedded", "--data-dir", staging]);
    for (const name of ["prod", "staging"]) {
      const login = await template.run(["--profile", name, "auth", "login", "--user", "admin", "--password-stdin"], {
        input: `${PASSWORD}\n`,
      });
      if (login.exitCode !== 0) throw new Error(show(login));
    }
    const home = template.sandbox.root;
    await mkdir(join(home, ".zfunc"), { recursive: true });
    await mkdir(join(home, ".config", "fish", "completions"), { recursive: true });
    await mkdir(join(home, "backups"), { recursive: true });
    await mkdir(join(home, "work"), { recursive: true });
    const event = { code: "LAUNCH", name: "Launch", startsAt: "2027-02-01T09:00:00Z" };
    await writeFile(join(home, "work", "event.json"), JSON.stringify(event));
    await writeFile(join(home, "work", "event.yaml"), "code: LAUNCH\nname: Launch\nstartsAt: 2027-02-01T09:00:00Z\n");
    await writeFile(join(home, "work", "room.yaml"), "type: Room\ndisplayName: Board room\nfloor: 3\ncapacity: 12\n");
    await writeFile(join(home, "work", "events.json"), JSON.stringify([event]));
    shim = join(home, "bin");
    await mkdir(shim, { recursive: true });
    await writeFile(join(shim, "bizctl"), `#!/bin/sh\nexec node '${BIN}' "$@"\n`);
    await chmod(join(shim, "bizctl"), 0o755);
    await template.server?.stop();
  }, 120_000);
  afterAll(async () => template?.close());

  const cases = RUNNABLE.filter((e) => (mode === "embedded" ? !remoteOnly(e) : !localOnly(e))).map((e) => [e] as const);

  it.concurrent.each(cases)(
    "%s",
    async (example) => {
      const line = prepared(example);
      if (line === undefined) return; // a placeholder the reader fills in (checked above)
      await slot(async () => {
        const sandbox = await makeSandbox();
        let server: ListeningApp | undefined;
        try {
          await cp(template.sandbox.root, sandbox.root, { recursive: true });
          if (mode === "remote") server = await serveDataDir(sandbox.dataDir);
          const file = join(sandbox.configDir, "config.json");
          const config = (await readFile(file, "utf8")).replaceAll(template.sandbox.root, sandbox.root);
          await writeFile(file, server ? config.replaceAll(template.server!.url, server.url) : config);
          // `server init` makes a new data dir: the reader's first step, before the quick start's data exists
          const dataDir = line.startsWith("bizctl server init") ? join(sandbox.root, "new-data") : sandbox.dataDir;
          const result = await execa("bash", ["-o", "pipefail", "-c", localized(line, dataDir, sandbox, server?.url)], {
            cwd: join(sandbox.root, "work"),
            reject: false,
            extendEnv: false,
            env: {
              ...sandbox.env,
              BIZCTL_DATA_DIR: dataDir,
              ...VARIABLES,
              PATH: `${join(sandbox.root, "bin")}:${sandbox.env.PATH}`,
            },
            stdin: "ignore",
            timeout: 60_000,
          });
          const report = `${line}\n→ ${result.exitCode}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
          expect(result.exitCode, report).toBe(0);
          expect(String(result.stderr), report).not.toMatch(/error|command not found|No such file/i);
        } finally {
          await server?.close();
          await rm(sandbox.root, { recursive: true, force: true });
        }
      });
    },
    120_000,
  );
});
