import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { closedPort, errorOf, json, MODES, show } from "../helpers/cli.js";
import { expectScenario, type Scenario, useInProcessSession } from "../helpers/in-process.js";

const EVENT = ["--set", "code=FLAG-1", "--set", "name=Flags", "--set", "startsAt=2027-01-10T09:00:00Z"];

/** Global flags that mean what they say: --server stays one-off, URLs and output formats are checked. */
describe.each(MODES)("flags (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let down: string;
  const profileName = mode === "remote" ? "r" : "default";
  const config = () => readFileSync(join(s.sandbox.configDir, "config.json"), "utf8");

  beforeAll(async () => {
    down = `http://127.0.0.1:${await closedPort()}`;
    const created = await s.run(["events", "create", ...EVENT]);
    expect(created.exitCode, show(created)).toBe(0);
  });

  const usageErrors = [
    {
      name: "a --server without a scheme",
      args: ["--server", "localhost:8080", "events", "list"],
      message: /'localhost:8080' needs a scheme: http:\/\/ or https:\/\/ \(http:\/\/localhost:8080\?\)/,
    },
    {
      name: "a --server of another scheme",
      args: ["--server", "ftp://example.com", "events", "list"],
      message: /needs a scheme/,
    },
    {
      name: "a --server without a host",
      args: ["--server", "http://", "events", "list"],
      message: /'http:\/\/' is not a valid URL/,
    },
    { name: "an unknown format", args: ["events", "list", "-o", "xml"], message: /Unknown output format 'xml'/ },
    {
      name: "--json and -o yaml",
      args: ["events", "list", "--json", "-o", "yaml"],
      message: /-o yaml and --json ask for different output formats/,
    },
    {
      name: "two -o that differ",
      args: ["events", "list", "-o", "json", "--output", "CSV"],
      message: /-o json and -o CSV ask for different/,
    },
  ];

  it.each(usageErrors)("$name exits 2 and says why", async ({ args, message }) => {
    const result = await s.run(args);
    expect(result.exitCode, show(result)).toBe(2);
    expect(result.stdout).toBe("");
    expect(errorOf(result)).toMatchObject({ code: "usage", exitCode: 2, message: expect.stringMatching(message) });
  });

  it("a bad global flag fails before the command does anything", async () => {
    const create = await s.run(["events", "create", ...EVENT.slice(2), "--set", "code=FLAG-2", "-o", "xml"]);
    expect(create.exitCode, show(create)).toBe(2);
    const get = await s.run(["events", "get", "FLAG-2"]);
    expect(get.exitCode, show(get)).toBe(3);
  });

  const formats = [
    { args: ["-o", "JSON"], parse: (out: string) => JSON.parse(out) },
    { args: ["--output=Yaml"], parse: (out: string) => parseYaml(out) },
    { args: ["-o", "NDJSON"], parse: (out: string) => [JSON.parse(out)] },
    { args: ["--json", "-o", "json"], parse: (out: string) => JSON.parse(out) },
  ];

  it.each(formats)("format names are case-insensitive and agreeing flags are fine: $args", async ({ args, parse }) => {
    const result = await s.run(["events", "list", "--fields", "code", ...args]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(parse(result.stdout)).toEqual([{ code: "FLAG-1" }]);
  });

  it("a bad format in any case still gets its error as JSON when -o json was asked", async () => {
    const result = await s.run(["-o", "JSON", "events", "get", "NOPE"]);
    expect(result.exitCode, show(result)).toBe(3);
    expect(errorOf(result).code).toBe("not_found");
  });

  it("auth login --server OTHER refuses (exit 2) and leaves the profile as it was", async () => {
    const other = mode === "remote" ? "embedded" : down;
    const before = config();
    const result = await s.run(["--server", other, "auth", "login", "--user", s.userName, "--password-stdin"], {
      input: `${s.password}\n`,
    });
    expect(result.exitCode, show(result)).toBe(2);
    const error = errorOf(result);
    expect(error.message).toMatch(/one-off that never writes/);
    expect(error.hint).toContain(`bizctl profile add NAME --server ${other}`);
    expect(error.hint).toContain("bizctl --profile NAME auth login");
    expect(config()).toBe(before);
    const shown = json(await s.run(["profile", "show"]));
    expect(shown).toMatchObject({ name: profileName, server: mode === "remote" ? s.server!.url : "embedded" });
    expect((await s.run(["events", "list"])).exitCode).toBe(0);
  });

  it("auth login --server naming the profile's own server is no override", async () => {
    const same = mode === "remote" ? `${s.server!.url}/` : "embedded";
    const env = await s.newConfig("c-same-server");
    const result = await s.run(["--server", same, "auth", "login", "--user", s.userName, "--password-stdin"], {
      env,
      input: `${s.password}\n`,
    });
    expect(result.exitCode, show(result)).toBe(0);
    const shown = json(await s.run(["profile", "show"], { env }));
    expect(shown).toMatchObject({ user: s.userName, server: mode === "remote" ? s.server!.url : "embedded" });
  });

  it("oauth access-token and flow refuse --server OTHER too (they would store credentials)", async () => {
    for (const args of [
      ["oauth", "access-token", "--consumer-key", "k", "--token", "t", "--verifier", "v"],
      ["oauth", "flow", "--consumer-key", "k"],
    ]) {
      const result = await s.run(["--server", down, ...args]);
      expect(result.exitCode, show(result)).toBe(2);
      expect(errorOf(result).message).toMatch(/one-off that never writes/);
    }
  });

  it("an unreachable --server points at the flag, not at the profile (exit 8)", async () => {
    const result = await s.run(["--server", down, "api", "GET", "/health"]);
    expect(result.exitCode, show(result)).toBe(8);
    expect(errorOf(result)).toMatchObject({ code: "server_unreachable", hint: "check the --server URL" });
    expect(errorOf(result).message).toContain(down);
  });

  it("a one-off --server without a token says the stored one is never sent to it (exit 4)", async () => {
    const other = mode === "remote" ? s.server!.url.replace("127.0.0.1", "localhost") : down;
    for (const args of [["events", "list"], ...(mode === "remote" ? [["api", "GET", "/auth/isLogged"]] : [])]) {
      const result = await s.run(["--server", other, ...args]);
      expect(result.exitCode, show(result)).toBe(4);
      const error = errorOf(result);
      expect(error.message).toContain(`token stored in profile '${profileName}' is never sent to a one-off server`);
      expect(error.hint).toContain("BIZCTL_TOKEN");
    }
  });
});

/** The same checks on a terminal: one human error line on stderr (errors are JSON only when piped). */
describe("flags and messages on a terminal (embedded)", () => {
  const s = useInProcessSession("embedded");

  const scenarios: (Scenario & { config?: string; dataDir?: string })[] = [
    {
      name: "an unknown help topic",
      args: ["help", "nosuch"],
      wantExit: 2,
      wantStderr: /^error: No help topic or command 'nosuch'\. — one of: exit-codes, auth/,
    },
    {
      name: "a --server without a scheme",
      args: ["--server", "localhost:8080", "events", "list"],
      wantExit: 2,
      wantStderr: /^error: --server 'localhost:8080' needs a scheme/,
    },
    {
      name: "formats that differ, one of them --json",
      args: ["events", "list", "--json", "-o", "yaml"],
      wantExit: 2,
      // --json asks for errors as JSON too
      wantStderr: /"message":"-o yaml and --json ask for different output formats\."/,
    },
    // the records on stdout, and on stderr that there are none
    {
      name: "an empty list",
      args: ["events", "list", "-o", "JSON"],
      wantExit: 0,
      wantStdout: /^\[\]\s*$/,
      wantStderr: "No events.\n",
    },
    {
      name: "a page size that is no number",
      args: ["events", "list", "--page-size", "abc"],
      wantExit: 2,
      wantStderr: /^error: --page-size must be a whole number from 1 to 100/,
    },
    {
      name: "logout when not logged in",
      args: ["auth", "logout"],
      config: "c-tty-never",
      wantExit: 0,
      wantStderr: /^Not logged in \(profile 'default'\)\. Nothing to do\.$/m,
    },
    {
      name: "a data dir never initialised",
      args: ["events", "list"],
      dataDir: "never",
      wantExit: 2,
      wantStderr:
        /^error: The data dir .*never was never initialised: there is no database at .* — run 'bizctl server init' first/,
    },
  ];

  it.each(scenarios)("$args → exit $wantExit", async ({ config, dataDir, ...scenario }) => {
    const env = {
      ...(config && { BIZCTL_CONFIG_DIR: join(s.sandbox.root, config) }),
      ...(dataDir && { BIZCTL_DATA_DIR: join(s.sandbox.root, dataDir) }),
    };
    await expectScenario(s, { ...scenario, tty: true, env });
  });
});
