/**
 * Issue 30's day on PostgreSQL, through the CLI against a real server: a member turns on a second
 * factor, logs in with a code and with a recovery code, loses the phone and is reset by an admin
 * (`users mfa-reset`), logs in with the password again; then a script's API token that reads
 * events and nothing else, revoked before its next request. The same commands on SQLite, in both
 * modes, are in test/commands/mfa.test.ts, api-tokens.test.ts and users-mfa-reset.test.ts.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN,
  type CliResult,
  type Env,
  errorOf,
  json,
  login,
  makeSandbox,
  PASSWORD,
  type RunningServer,
  type Sandbox,
  show,
  startServer,
} from "../helpers/cli.js";
import { runInProcess } from "../helpers/in-process.js";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";
import { codeOf } from "../helpers/totp.js";

const TEMPORARY = "ochre violin summit 4478 tundra";
const OWN = "amber lantern orbit 3391 prairie";

describe("second factor and API tokens through the CLI, on PostgreSQL (remote)", () => {
  let sandbox: Sandbox;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let server: RunningServer;
  let admin: Env;
  let mia: Env;

  const ok = (result: CliResult) => {
    expect(result.exitCode, show(result)).toBe(0);
    return result;
  };

  beforeAll(async () => {
    sandbox = await makeSandbox();
    database = await createTestDatabase();
    admin = { ...sandbox.env, BIZCTL_SECRET_KEY: TEST_SECRET_KEY };
    const storage = ["--database", database.url];
    ok(
      await runInProcess(["server", "init", "--admin-user", ADMIN, "--password-stdin", ...storage], {
        env: admin,
        input: `${PASSWORD}\n`,
      }),
    );
    server = await startServer(sandbox.dataDir, { env: admin, args: storage });
    ok(await runInProcess(["profile", "add", "r", "--server", server.url, "--use"], { env: admin }));
    ok(await login(admin, ADMIN, PASSWORD, undefined, runInProcess));
    ok(
      await runInProcess(
        ["users", "create", "--user-name", "mia", "--email", "mia@example.com", "--role", "member", "--password-stdin"],
        { env: admin, input: `${TEMPORARY}\n` },
      ),
    );
    mia = { ...admin, BIZCTL_CONFIG_DIR: join(sandbox.root, "config-mia") };
    ok(await runInProcess(["profile", "add", "r", "--server", server.url, "--use"], { env: mia }));
    ok(await login(mia, "mia", TEMPORARY, OWN, runInProcess));
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await database?.drop();
    await sandbox?.remove();
  });

  const run = (env: Env, args: string[], input?: string) =>
    runInProcess(args, { env, ...(input !== undefined && { input }) });
  const miaLogin = (...lines: string[]) =>
    run(mia, ["auth", "login", "--user", "mia", "--password-stdin"], `${[OWN, ...lines].join("\n")}\n`);

  it("enrolls, logs in with a code and a recovery code, is reset by an admin, then logs in with the password", async () => {
    const { secret } = json<{ secret: string }>(ok(await run(mia, ["auth", "mfa", "enroll", "--json"])));
    const { recoveryCodes } = json<{ recoveryCodes: string[] }>(
      ok(await run(mia, ["auth", "mfa", "verify", "--code-stdin"], `${codeOf(secret)}\n`)),
    );
    expect(errorOf(await miaLogin()).message).toMatch(/code/);
    ok(await miaLogin(codeOf(secret, Date.now() + 30_000)));
    ok(await miaLogin(recoveryCodes[0]!));

    ok(await run(admin, ["users", "mfa-reset", "mia", "--reason", "lost phone", "--yes"]));
    // the reset ended mia's sessions: the stored token is refused
    const ended = await run(mia, ["events", "list"]);
    expect(ended.exitCode, show(ended)).toBe(4);
    ok(await miaLogin());
    expect(json<{ enabled: boolean }>(ok(await run(mia, ["auth", "mfa", "status", "--json"]))).enabled).toBe(false);
    const audit = ok(await run(admin, ["audit", "list", "--filter", 'action eq "mfa.reset"', "--json"]));
    expect(JSON.stringify(json(audit))).toContain("lost phone");
  });

  it("gives a script a token that reads events and nothing else; revoked, its next request is refused", async () => {
    const created = json<{ token: string; id: string }>(
      ok(await run(mia, ["auth", "tokens", "create", "--name", "ci", "--scope", "events:read", "--json"])),
    );
    const script = { ...mia, BIZCTL_CONFIG_DIR: join(sandbox.root, "config-script"), BIZCTL_TOKEN: created.token };
    ok(await run(script, ["--server", server.url, "events", "list"]));
    const write = await run(script, [
      "--server",
      server.url,
      "events",
      "create",
      "--set",
      "code=CI-1",
      "--set",
      "name=CI",
      "--set",
      "startsAt=2027-01-01T09:00:00Z",
    ]);
    expect(write.exitCode, show(write)).toBe(5);
    ok(await run(mia, ["auth", "tokens", "revoke", created.id, "--yes"]));
    const revoked = await run(script, ["--server", server.url, "events", "list"]);
    expect(revoked.exitCode, show(revoked)).toBe(4);
  });
});
