/**
 * Issue 32 part 3: `oauth flow` through an instance whose configured public URL is another
 * address (a second instance, a proxy's inside) fails with `oauth_signature_invalid`; the
 * message names the public URL the signature must be made over.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN,
  bizctl,
  type Env,
  errorOf,
  json,
  makeSandbox,
  PASSWORD,
  type RunningServer,
  type Sandbox,
  show,
  startServer,
} from "../helpers/cli.js";

const PUBLIC_URL = "https://bizctl.example.test";

describe("oauth flow through an address that is not the public URL", () => {
  let sandbox: Sandbox;
  let server: RunningServer;
  let env: Env;

  const run = async (args: string[], input?: string) => {
    const result = await bizctl(args, { env, input });
    expect(result.exitCode, show(result)).toBe(0);
    return result;
  };

  beforeAll(async () => {
    sandbox = await makeSandbox();
    env = sandbox.env;
    const init = await run(["server", "init", "--admin-user", ADMIN]);
    server = await startServer(sandbox.dataDir, { env, args: ["--public-url", PUBLIC_URL] });
    await run(["profile", "add", "inside", "--server", server.url, "--use"]);
    await run(["auth", "login", "--user", ADMIN, "--password-stdin"], `${json(init).oneTimePassword}\n${PASSWORD}\n`);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await sandbox?.remove();
  });

  it("says that the signature was made over the address reached, and names the public URL", async () => {
    const consumer = json(await run(["oauth", "consumers", "create", "--name", "Printer"]));
    const flow = await bizctl(["oauth", "flow", "--consumer-key", consumer.consumerKey, "--consumer-secret-stdin"], {
      env,
      input: `${consumer.consumerSecret}\n`,
    });
    expect(flow.exitCode, show(flow)).toBe(4);
    const error = errorOf(flow);
    expect(error.code).toBe("oauth_signature_invalid");
    expect(error.message).toContain(`made over ${server.url}/`);
    expect(error.message).toContain(`its public URL: ${PUBLIC_URL}/`);
  });
});
