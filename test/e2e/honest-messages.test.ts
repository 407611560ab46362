import { readFileSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  closedPort,
  errorOf,
  httpJson,
  login,
  MODES,
  makeSandbox,
  show,
  startServer,
  useSession,
} from "../helpers/cli.js";

/** What a failure says matches what happened (issue "honest messages"). */
describe.each(MODES)("honest messages (%s)", (mode) => {
  const s = useSession(mode);

  const numbers = [
    { args: ["events", "list", "--page-size", "abc"], message: "--page-size must be a whole number from 1 to 100" },
    { args: ["events", "list", "--page-size", "101"], message: "--page-size must be a whole number from 1 to 100" },
    { args: ["events", "list", "--page-size", "1.5"], message: "--page-size must be a whole number from 1 to 100" },
    { args: ["events", "list", "--page", "0"], message: "--page must be a whole number from 1" },
    { args: ["resources", "list", "--count", "ten"], message: "--count must be a whole number from 0 to 500" },
    { args: ["users", "list", "--start-index", "-1"], message: "--start-index must be a whole number from 1" },
  ];

  it.each(numbers)("$args exits 2 with '$message', never a regular expression", async ({ args, message }) => {
    const result = await s.run(args);
    expect(result.exitCode, show(result)).toBe(2);
    const error = errorOf(result);
    expect(error.message).toContain(message);
    expect(error.message).not.toMatch(/pattern|\^|\[0-9\]/);
  });

  const emptyStdin = [
    {
      args: ["auth", "login", "--user", "admin", "--password-stdin"],
      input: "",
      message: /stdin is empty: the password/,
    },
    {
      args: ["auth", "change-password", "--password-stdin"],
      input: "",
      message: /stdin is empty: the current password/,
    },
    {
      args: ["auth", "reset-password", "--token", "x", "--password-stdin"],
      input: "",
      message: /stdin is empty: the new password/,
    },
    { args: ["auth", "login", "--user", "admin", "--password-stdin"], input: "\n", message: /stdin is empty/ },
  ];

  it.each(emptyStdin)("$args with stdin '$input' says stdin was empty (exit 2)", async ({ args, input, message }) => {
    const result = await s.run(args, { input });
    expect(result.exitCode, show(result)).toBe(2);
    const error = errorOf(result);
    expect(error.message).toMatch(message);
    expect(`${error.message} ${error.hint}`).not.toMatch(/pass it with --password-stdin/);
  });

  it("auth logout when not logged in exits 0 with a note", async () => {
    const env = await s.newConfig("c-never");
    const result = await s.run(["auth", "logout"], { env });
    expect(result.exitCode, show(result)).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/Not logged in .*Nothing to do/);
  });

  it.runIf(mode === "remote")(
    "auth logout with the server down forgets the token and warns that the session may be live",
    async () => {
      const env = await s.newConfig("c-down");
      expect((await login(env, s.userName, s.password)).exitCode).toBe(0);
      const token = (await s.run(["auth", "token"], { env })).stdout.trim();
      const file = join(env.BIZCTL_CONFIG_DIR!, "config.json");
      const config = JSON.parse(readFileSync(file, "utf8"));
      config.profiles.r.server = `http://127.0.0.1:${await closedPort()}`;
      writeFileSync(file, JSON.stringify(config));

      // BIZCTL_TOKEN is not the CLI's to forget: nothing happened, and it says so
      const envToken = await s.run(["auth", "logout"], { env: { ...env, BIZCTL_TOKEN: token } });
      expect(envToken.exitCode, show(envToken)).toBe(8);

      const result = await s.run(["auth", "logout"], { env });
      expect(result.exitCode, show(result)).toBe(0);
      expect(result.stderr).toMatch(
        /^warning: forgot the token of profile 'r', but the server did not end its session/,
      );
      expect(result.stderr).toMatch(/connection refused.*may still be live until/);
      expect(readFileSync(file, "utf8")).not.toContain(token);
      // the server never heard of it: the session is live, as the warning said
      const live = await s.run(["events", "list"], { env: { BIZCTL_TOKEN: token } });
      expect(live.exitCode, show(live)).toBe(0);
    },
  );
});

describe("honest messages about the credential, the rate limit and a write cut off", () => {
  const s = useSession("remote");

  it("a refused BIZCTL_TOKEN is blamed, not the login", async () => {
    const other = await s.newConfig("token-source");
    expect((await login(other, s.userName, s.password)).exitCode).toBe(0);
    const token = (await s.run(["auth", "token"], { env: other })).stdout.trim();
    expect((await s.run(["auth", "logout"], { env: other })).exitCode).toBe(0);
    const result = await s.run(["events", "list"], { env: { BIZCTL_TOKEN: token } });
    expect(result.exitCode, show(result)).toBe(4);
    expect(errorOf(result).hint).toMatch(/BIZCTL_TOKEN holds a token the server refused/);
  });

  it("a rate-limited login says when to retry", async () => {
    const sandbox = await makeSandbox();
    const server = await startServer(s.sandbox.dataDir, {
      env: { ...sandbox.env, BIZCTL_DATA_DIR: s.sandbox.dataDir },
      args: ["--login-rate-limit", "1"],
    });
    try {
      const first = await httpJson(server, "POST", "/auth/login", { userName: "x", password: "y" });
      expect(first.status).toBe(401);
      const limited = await s.run(
        ["--server", server.url, "api", "POST", "/auth/login", "--data", '{"userName":"x","password":"y"}'],
        {
          env: sandbox.env,
        },
      );
      expect(limited.exitCode, show(limited)).toBe(1);
      expect(errorOf(limited).message).toMatch(/Retry in \d+ s\./);
    } finally {
      await server.stop();
      await sandbox.remove();
    }
  });

  it("a POST whose connection breaks after it was sent may have been applied, and says so", async () => {
    const swallower = createServer((socket) => socket.once("data", () => socket.destroy()));
    await new Promise<void>((done) => swallower.listen(0, "127.0.0.1", done));
    const url = `http://127.0.0.1:${(swallower.address() as AddressInfo).port}`;
    try {
      const env = { BIZCTL_TOKEN: "any" };
      const write = await s.run(["--server", url, "api", "POST", "/api/crm/v1/events", "--data", "{}"], { env });
      expect(write.exitCode, show(write)).toBe(8);
      expect(errorOf(write).message).toMatch(/POST may have been applied/);
      const read = await s.run(["--server", url, "api", "GET", "/api/crm/v1/events"], { env });
      expect(read.exitCode, show(read)).toBe(8);
      // a GET is retried, then fails; reading cannot have changed anything
      expect(read.stderr).not.toMatch(/may have been applied/);
      const refused = await s.run(
        ["--server", `http://127.0.0.1:${await closedPort()}`, "api", "POST", "/x", "--data", "{}"],
        { env },
      );
      expect(errorOf(refused).message).not.toMatch(/may have been applied/);
    } finally {
      swallower.close();
    }
  });
});
