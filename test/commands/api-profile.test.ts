import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { closedPort, errorOf, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

describe.each(MODES)("api (%s)", (mode) => {
  const s = useInProcessSession(mode);

  it("api GET /auth/isLogged prints the JSON answer", async () => {
    const result = await s.run(["api", "GET", "/auth/isLogged"]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(json(result)).toMatchObject({ loggedIn: true, user: { id: s.userId, userName: s.userName } });
    // the method is case-insensitive, and so are the original paths
    const lower = await s.run(["api", "get", "/Auth/IsLogged/"]);
    expect(lower.exitCode, show(lower)).toBe(0);
  });

  it("api GET of an unknown path exits 3", async () => {
    const result = await s.run(["api", "GET", "/nope"]);
    expect(result.exitCode, show(result)).toBe(3);
    expect(result.stdout).toBe("");
    expect(errorOf(result)).toMatchObject({ code: "not_found", status: 404, exitCode: 3 });
  });

  it("api sends --data as JSON, @FILE or - (stdin); invalid JSON exits 2 before any call", async () => {
    const bad = await s.run(["api", "POST", "/api/crm/v1/events", "--data", "{not json"]);
    expect(bad.exitCode, show(bad)).toBe(2);
    expect(errorOf(bad).message).toContain("--data");

    const inline = await s.run([
      "api",
      "POST",
      "/api/crm/v1/events",
      "--data",
      '{"code":"API-1","name":"Inline","startsAt":"2027-01-10T09:00:00Z"}',
    ]);
    expect(inline.exitCode, show(inline)).toBe(0);
    expect(json(inline)).toMatchObject({ code: "API-1", version: 1 });

    const file = join(s.sandbox.root, "body.json");
    writeFileSync(file, JSON.stringify({ code: "API-2", name: "From file", startsAt: "2027-01-11T09:00:00Z" }));
    const fromFile = await s.run(["api", "POST", "/api/crm/v1/events/", "--data", `@${file}`]);
    expect(fromFile.exitCode, show(fromFile)).toBe(0);
    expect(json(fromFile).code).toBe("API-2");

    const fromStdin = await s.run(["api", "POST", "/api/crm/v1/events", "--data", "-"], {
      input: JSON.stringify({ code: "API-3", name: "From stdin", startsAt: "2027-01-12T09:00:00Z" }),
    });
    expect(fromStdin.exitCode, show(fromStdin)).toBe(0);

    const invalid = await s.run(["api", "POST", "/api/crm/v1/events", "--data", '{"name":5}']);
    expect(invalid.exitCode, show(invalid)).toBe(7);
    const duplicate = await s.run(["api", "POST", "/api/crm/v1/events", "--data", "-"], {
      input: JSON.stringify({ code: "api-1", name: "Again", startsAt: "2027-01-12T09:00:00Z" }),
    });
    expect(duplicate.exitCode, show(duplicate)).toBe(6);

    const deleted = await s.run(["api", "DELETE", "/api/crm/v1/events/API-3"]);
    expect(deleted.exitCode, show(deleted)).toBe(0);
    expect(deleted.stdout).toBe("");
    const list = await s.run(["events", "list", "--json"]);
    expect(json<{ code: string }[]>(list).map((e) => e.code)).toEqual(["API-1", "API-2"]);
  });

  // an empty stdin or file is not "not valid JSON": it says what was read, before any call
  it.each([
    {
      name: "an empty stdin",
      data: "-",
      input: "",
      said: "--data - read nothing: stdin is empty; send the JSON body there.",
    },
    {
      name: "a blank stdin",
      data: "-",
      input: " \n",
      said: "--data - read nothing: stdin is empty; send the JSON body there.",
    },
  ])("api --data: $name exits 2, saying so", async ({ data, input, said }) => {
    const result = await s.run(["api", "POST", "/api/crm/v1/events", "--data", data], { input });
    expect(result.exitCode, show(result)).toBe(2);
    expect(errorOf(result).message).toBe(said);
  });

  it("api --data @FILE of an empty file exits 2, naming the file", async () => {
    const file = join(s.sandbox.root, "empty.json");
    writeFileSync(file, "");
    const result = await s.run(["api", "POST", "/api/crm/v1/events", "--data", `@${file}`]);
    expect(result.exitCode, show(result)).toBe(2);
    expect(errorOf(result).message).toBe(`--data @${file} read nothing: the file is empty; put the JSON body in it.`);
  });

  it("api refuses an unknown method or a relative path (exit 2), and needs a credential where the API does", async () => {
    expect((await s.run(["api", "FETCH", "/health"])).exitCode).toBe(2);
    expect((await s.run(["api", "GET", "health"])).exitCode).toBe(2);
    const env = await s.newConfig("c-anonymous");
    const health = await s.run(["api", "GET", "/health"], { env });
    expect(health.exitCode, show(health)).toBe(0);
    const anonymous = await s.run(["api", "GET", "/auth/isLogged"], { env });
    expect(anonymous.exitCode, show(anonymous)).toBe(4);
    expect(errorOf(anonymous).code).toBe("token_missing");
  });
});

describe.each(MODES)("profiles (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let port: number;
  beforeAll(async () => {
    port = await closedPort();
  });

  it("profile list and show tell the profiles, their servers and users", async () => {
    const list = await s.run(["profile", "list"]);
    expect(list.exitCode, show(list)).toBe(0);
    const profiles = json<{ name: string; current: boolean; server: string; user: string | null }[]>(list);
    const current = mode === "remote" ? "r" : "default";
    expect(profiles.find((p) => p.name === "default")).toMatchObject({ server: "embedded" });
    expect(profiles.find((p) => p.current)).toMatchObject({ name: current, user: s.userName, session: "active" });
    if (mode === "remote") expect(profiles.find((p) => p.name === "r")?.server).toBe(s.server!.url);

    const shown = await s.run(["profile", "show"]);
    expect(shown.exitCode, show(shown)).toBe(0);
    expect(json(shown)).toMatchObject({
      name: current,
      current: true,
      user: s.userName,
      configFile: join(s.sandbox.configDir, "config.json"),
    });
    const byName = await s.run(["profile", "show", "default"]);
    expect(json(byName)).toMatchObject({ name: "default", server: "embedded" });
    expect((await s.run(["profile", "show", "nosuch"])).exitCode).toBe(2);
  });

  it("profile add, use and remove", async () => {
    const env = await s.newConfig("c-profiles");
    const lab = `${s.sandbox.root}/lab`;
    const add = await s.run(["profile", "add", "lab", "--server", "embedded", "--data-dir", lab], { env });
    expect(add.exitCode, show(add)).toBe(0);
    expect(add.stdout).toBe("");
    const addRemote = await s.run(["profile", "add", "prod", "--server", "https://api.example.com"], { env });
    expect(addRemote.exitCode, show(addRemote)).toBe(0);

    const use = await s.run(["profile", "use", "lab"], { env });
    expect(use.exitCode, show(use)).toBe(0);
    const shown = json(await s.run(["profile", "show"], { env }));
    expect(shown).toMatchObject({
      name: "lab",
      current: true,
      server: "embedded",
      dataDir: lab,
      user: null,
      session: "none",
    });
    // BIZCTL_PROFILE and --profile take precedence over the current one, in that order
    const viaEnv = json(await s.run(["profile", "show"], { env: { ...env, BIZCTL_PROFILE: "prod" } }));
    expect(viaEnv).toMatchObject({ name: "prod", server: "https://api.example.com" });
    const viaFlag = json(
      await s.run(["--profile", "default", "profile", "show"], { env: { ...env, BIZCTL_PROFILE: "prod" } }),
    );
    expect(viaFlag.name).toBe("default");

    // a relative data dir (resolved against the working directory): test/e2e/global.test.ts

    const remove = await s.run(["profile", "remove", "lab"], { env });
    expect(remove.exitCode, show(remove)).toBe(0);
    const names = json<{ name: string; current: boolean }[]>(await s.run(["profile", "list"], { env }));
    expect(names.map((p) => p.name)).not.toContain("lab");
    // the current profile was removed: back to the default one
    const current = names.find((p) => p.current)?.name;
    expect(current).toBe("default");

    const errors = [
      ["profile", "remove", "default"],
      ["profile", "remove", "nosuch"],
      ["profile", "use", "nosuch"],
      ["profile", "add", "bad name", "--server", "embedded"],
      ["profile", "add", "noserver"],
      ["profile", "add", "ftp", "--server", "ftp://example.com"],
      ["profile", "add", "nourl", "--server", "not a url"],
    ];
    for (const args of errors) {
      const result = await s.run(args, { env });
      expect(result.exitCode, show(result)).toBe(2);
      expect(errorOf(result).code).toBe("usage");
    }
  });

  it("--profile or BIZCTL_PROFILE naming no profile exits 2", async () => {
    const flag = await s.run(["--profile", "nosuch", "events", "list"]);
    expect(flag.exitCode, show(flag)).toBe(2);
    expect(errorOf(flag).message).toContain("nosuch");
    const env = await s.run(["events", "list"], { env: { BIZCTL_PROFILE: "nosuch" } });
    expect(env.exitCode, show(env)).toBe(2);
    // the main profile is untouched
    expect((await s.run(["events", "list"])).exitCode).toBe(0);
  });

  it("a server that is down exits 8 saying the connection was refused", async () => {
    const down = `http://127.0.0.1:${port}`;
    const add = await s.run(["profile", "add", "down", "--server", down]);
    expect(add.exitCode, show(add)).toBe(0);
    const token = (await s.run(["auth", "token"])).stdout.trim();

    const runs = [
      await s.run(["--profile", "down", "auth", "login", "--user", s.userName, "--password-stdin"], {
        input: `${s.password}\n`,
      }),
      await s.run(["--profile", "down", "events", "list"], { env: { BIZCTL_TOKEN: token } }),
      await s.run(["--profile", "down", "api", "GET", "/health"]),
      await s.run(["--server", down, "api", "GET", "/health"]),
    ];
    for (const result of runs) {
      expect(result.exitCode, show(result)).toBe(8);
      expect(result.stdout).toBe("");
      const error = errorOf(result);
      expect(error).toMatchObject({ code: "server_unreachable", exitCode: 8 });
      expect(error.message).toContain("connection refused");
      expect(error.message).toContain(down);
    }
    // without a credential it says so before trying to connect
    const noToken = await s.run(["--profile", "down", "events", "list"]);
    expect(noToken.exitCode, show(noToken)).toBe(4);
    expect((await s.run(["profile", "remove", "down"])).exitCode).toBe(0);
  });

  it.runIf(mode === "remote")("a one-off --server other than the profile's never gets the stored token", async () => {
    const same = await s.run(["--server", s.server!.url, "events", "list"]);
    expect(same.exitCode, show(same)).toBe(0);
    const other = s.server!.url.replace("127.0.0.1", "localhost");
    const result = await s.run(["--server", other, "events", "list"]);
    expect(result.exitCode, show(result)).toBe(4);
    const token = (await s.run(["auth", "token"])).stdout.trim();
    const withEnv = await s.run(["--server", other, "events", "list"], { env: { BIZCTL_TOKEN: token } });
    expect(withEnv.exitCode, show(withEnv)).toBe(0);
  });
});
