/**
 * The README's quick start, run command by command through the real binary. `bizctl` (on the PATH
 * through `npm link`) becomes `node bin/bizctl.js`; what needs a terminal or a tool (the login
 * prompts, `jq`, a server on a fixed port) is replaced by its scripted equivalent, and any other
 * line fails the test, so the README cannot drift from what works.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bizctl,
  type CliResult,
  cleanEnv,
  type Env,
  json,
  leaksOf,
  makeSandbox,
  PASSWORD,
  ROOT,
  type RunningServer,
  type Sandbox,
  show,
  startServer,
} from "../helpers/cli.js";

/** The ```sh blocks under a heading of README.md, each as its command lines (comments removed). */
function shBlocks(heading: string): string[][] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf(`\n${heading}\n`);
  expect(start, `README.md has no '${heading}' section`).toBeGreaterThanOrEqual(0);
  const section = readme.slice(start + heading.length + 2).split(/\n## /)[0]!;
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    m[1]!
      .split("\n")
      .map((line) => stripComment(line).trim())
      .filter(Boolean),
  );
}

function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

/** Shell words (quotes removed; `|` and `&` as words of their own); enough for the README. */
function words(line: string): string[] {
  const out: string[] = [];
  let current: string | undefined;
  let quote: string | undefined;
  for (const c of line) {
    if (quote) {
      if (c === quote) quote = undefined;
      else current = (current ?? "") + c;
    } else if (c === "'" || c === '"') {
      quote = c;
      current ??= "";
    } else if (/\s/.test(c)) {
      if (current !== undefined) out.push(current);
      current = undefined;
    } else if (c === "|" || c === "&") {
      if (current !== undefined) out.push(current);
      current = undefined;
      out.push(c);
    } else current = (current ?? "") + c;
  }
  expect(quote, `unbalanced quotes in: ${line}`).toBeUndefined();
  if (current !== undefined) out.push(current);
  return out;
}

describe("README quick start", () => {
  let sandbox: Sandbox;
  let server: RunningServer | undefined;
  /** nothing but PATH and HOME: the default (XDG) config and data dirs, as on a fresh machine */
  let env: Env;
  let dataDir: string;
  const blocks = shBlocks("## Quick start");
  beforeAll(async () => {
    sandbox = await makeSandbox();
    env = cleanEnv({ HOME: sandbox.root });
    dataDir = join(sandbox.root, ".local", "share", "bizctl");
  });
  afterAll(async () => {
    await server?.stop();
    await sandbox?.remove();
  });

  it("has the two blocks this test knows how to run", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    expect(blocks[0]!.some((l) => l.startsWith("bizctl server init"))).toBe(true);
    expect(blocks[1]!.some((l) => l.startsWith("bizctl server start"))).toBe(true);
  });

  it("works as written against the embedded default (first block)", async () => {
    let oneTimePassword: string | undefined;
    let listed: string[] | undefined;
    for (const line of blocks[0]!) {
      const argv = words(line);
      if (argv[0] === "npm" && argv[1] === "install") continue; // done before the tests run
      if (argv[0] === "npm" && argv[1] === "link") continue; // the binary is run by its path here
      expect(argv[0], line).toBe("bizctl");
      const pipe = argv.indexOf("|");
      const args = argv.slice(1, pipe >= 0 ? pipe : undefined);
      let result: CliResult;
      if (args[0] === "auth" && args[1] === "login") {
        // no terminal here: the one-time password, then a new one, on stdin
        expect(oneTimePassword, "server init came first").toBeDefined();
        result = await bizctl([...args, "--password-stdin"], { env, input: `${oneTimePassword}\n${PASSWORD}\n` });
        expect(result.exitCode, show(result)).toBe(0);
        expect(json(result).firstLogin).toBe(false);
      } else {
        result = await bizctl(args, { env });
        expect(result.exitCode, show(result)).toBe(0);
      }
      if (args[0] === "server" && args[1] === "init") {
        oneTimePassword = json(result).oneTimePassword;
        expect(json(result).dataDir).toBe(dataDir);
      }
      if (pipe >= 0) {
        // `| jq '.[].code'`
        expect(argv.slice(pipe + 1), line).toEqual(["jq", ".[].code"]);
        listed = json<{ code: string }[]>(result).map((e) => e.code);
      }
      if (args[0] === "events" && args[1] === "list" && pipe < 0) {
        // piped: JSON, as the README says
        expect(json<{ code: string }[]>(result).map((e) => e.code)).toEqual(["KICKOFF"]);
      }
    }
    expect(listed).toEqual(["KICKOFF"]);
    const event = await bizctl(["events", "get", "KICKOFF"], { env });
    expect(json(event)).toMatchObject({ code: "KICKOFF", name: "Kick-off", startsAt: "2027-01-10T09:00:00Z" });
    const status = await bizctl(["auth", "status", "--json"], { env });
    expect(json(status)).toMatchObject({
      profile: "default",
      configFile: join(sandbox.root, ".config", "bizctl", "config.json"),
      configFileMode: "0600",
    });
  });

  it("serves the same data over HTTP to a profile (second block, remote)", async () => {
    let listed: string[] | undefined;
    for (const line of blocks[1]!) {
      const argv = words(line);
      expect(argv[0], line).toBe("bizctl");
      let args = argv.slice(1);
      if (args[0] === "server" && args[1] === "start") {
        // `server start --port 8080 &`: the same, on a free port
        expect(args.at(-1), line).toBe("&");
        server = await startServer(dataDir, { env });
        continue;
      }
      expect(args, line).not.toContain("&");
      expect(server, "the server was started first").toBeDefined();
      args = args.map((a) => a.replace(/^http:\/\/127\.0\.0\.1:8080$/, server!.url));
      const login = args.includes("auth") && args.includes("login");
      const result = login
        ? await bizctl([...args, "--password-stdin"], { env, input: `${PASSWORD}\n` })
        : await bizctl(args, { env });
      expect(result.exitCode, show(result)).toBe(0);
      if (login) expect(json(result)).toMatchObject({ profile: "prod", server: server!.url });
      if (args.includes("events") && args.includes("list"))
        listed = json<{ code: string }[]>(result).map((e) => e.code);
    }
    expect(listed).toEqual(["KICKOFF"]);
    // a graceful shutdown on SIGTERM
    const running = server!;
    server = undefined;
    expect(await running.stop()).toBe(0);
    expect(leaksOf(PASSWORD)).toEqual([]);
  });
});
