import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, type Installed, installAndStart } from "../helpers/backends.js";
import { bearerHeader, bizctl, type CliResult, httpJson, json, PASSWORD, show } from "../helpers/cli.js";

/**
 * `server recover-admin`, the break-glass path, through the real binary: it needs the database
 * (and the secret), never the API, and gives back an admin whatever state the accounts are in.
 */

describe.each(BACKENDS)("server recover-admin on $name", (backend) => {
  let installed: Installed;
  const server = (args: string[], input?: string): Promise<CliResult> =>
    bizctl(["server", ...args, ...installed.installation.args], { env: installed.installation.env, input });
  const recover = async (userName: string) => {
    const result = await server(["recover-admin", "--admin-user", userName, "--json"]);
    expect(result.exitCode, show(result)).toBe(0);
    return json<{ id: string; userName: string; created: boolean; oneTimePassword: string }>(result);
  };
  const http = (method: string, path: string, body?: unknown, token?: string) =>
    httpJson(installed.server, method, path, body, token ? bearerHeader(token) : {});
  const loginAs = (userName: string, password: string) => http("POST", "/auth/login", { userName, password });
  const tokenOf = async (response: Response) => ((await response.json()) as { token: string }).token;

  beforeAll(async () => {
    installed = await installAndStart(backend);
  });
  afterAll(async () => installed?.close());

  it("gives a locked-out admin a one-time password, unlocked, its sessions ended", async () => {
    const before = await tokenOf(await loginAs("admin", PASSWORD));
    for (let i = 0; i < 5; i++) expect((await loginAs("admin", "not the password at all 0")).status).toBe(401);
    expect((await loginAs("admin", PASSWORD)).status).toBe(429);

    const recovered = await recover("admin");
    expect(recovered).toMatchObject({ userName: "admin", created: false });
    expect((await http("GET", "/auth/isLogged", undefined, before)).status).toBe(401);
    expect((await loginAs("admin", PASSWORD)).status).toBe(401);
    const fresh = await loginAs("admin", recovered.oneTimePassword);
    expect(fresh.status).toBe(200);
    expect(await fresh.json()).toMatchObject({ firstLogin: true, user: { roles: ["admin"] } });
  });

  it("makes a disabled admin active again", async () => {
    const admin = await recover("admin");
    const token = await tokenOf(await loginAs("admin", admin.oneTimePassword));
    const changed = await http(
      "POST",
      "/auth/ChangePassWithLastPass",
      { lastPassword: admin.oneTimePassword, newPassword: PASSWORD },
      token,
    );
    expect(changed.status).toBe(204);
    const created = await http(
      "POST",
      "/Resources",
      { resourceType: "User", userName: "second", roles: [{ value: "admin" }], active: false },
      token,
    );
    expect(created.status).toBe(201);
    const second = await recover("second");
    expect(second).toMatchObject({ userName: "second", created: false });
    const login = await loginAs("second", second.oneTimePassword);
    expect(login.status).toBe(200);
  });

  it("creates an admin under a name nobody holds, and says so", async () => {
    const result = await server(["recover-admin", "--admin-user", "rescue"]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(result.stderr).toMatch(/Created admin 'rescue'/);
    expect(json(result)).toMatchObject({ userName: "rescue", created: true });
  });

  it("refuses a user name with control characters (exit 7)", async () => {
    const result = await server(["recover-admin", "--admin-user", "bad\u001bname"]);
    expect(result.exitCode, show(result)).toBe(7);
  });
});
