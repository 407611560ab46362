/**
 * `oauth call` retries are signed afresh. A gateway in front of a real server passes a signed
 * GET on to the server (which spends its nonce) and then answers the CLI 503, as a gateway that
 * timed out would; the CLI retries, and the retry must carry a new nonce and signature, or the
 * server refuses it as a replay (401 oauth_nonce_reused).
 */
import { createServer, request as forward, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bizctl, type Env, json, login, PASSWORD, show, useSession } from "../helpers/cli.js";

interface Gateway {
  url: string;
  /** the next request to this path is passed on, then answered 503 */
  failNext(path: string): void;
  /** Authorization headers of the requests to `path`, in order */
  seen(path: string): string[];
  close(): Promise<void>;
}

async function startGateway(upstream: string): Promise<Gateway> {
  const target = new URL(upstream);
  const seen: { path: string; authorization: string }[] = [];
  let failing: string | undefined;
  const server: Server = createServer((incoming, outgoing) => {
    const path = (incoming.url ?? "/").split("?")[0]!;
    seen.push({ path, authorization: String(incoming.headers.authorization ?? "") });
    const fail = failing === path;
    if (fail) failing = undefined;
    // the Host header goes through unchanged: the server checks the signature over the URL the client used
    const proxied = forward(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        if (fail) {
          answer.resume();
          answer.on("end", () => {
            outgoing.writeHead(503, { "retry-after": "0", "content-type": "text/plain" });
            outgoing.end("upstream timed out");
          });
          return;
        }
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    incoming.pipe(proxied);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    failNext: (path) => {
      failing = path;
    },
    seen: (path) => seen.filter((s) => s.path === path).map((s) => s.authorization),
    close: () => new Promise((done) => server.close(() => done())),
  };
}

const nonceOf = (header: string) => /oauth_nonce="([^"]+)"/.exec(header)?.[1];
const signatureOf = (header: string) => /oauth_signature="([^"]+)"/.exec(header)?.[1];

describe("oauth call retries (remote, through a gateway that answers 503 after passing the request on)", () => {
  const s = useSession("remote");
  let gateway: Gateway;
  let env: Env;

  beforeAll(async () => {
    gateway = await startGateway(s.server!.url);
    env = await s.newConfig("gateway");
    const added = await bizctl(["profile", "add", "g", "--server", gateway.url, "--use"], { env });
    expect(added.exitCode, show(added)).toBe(0);
    expect((await login(env, "admin", PASSWORD)).exitCode).toBe(0);
    const created = await s.run(["oauth", "consumers", "create", "--name", "Retrier", "--json"]);
    expect(created.exitCode, show(created)).toBe(0);
    const consumer = json<{ consumerKey: string; consumerSecret: string }>(created);
    const flow = await bizctl(["oauth", "flow", "--consumer-key", consumer.consumerKey, "--consumer-secret-stdin"], {
      env,
      input: `${consumer.consumerSecret}\n`,
    });
    expect(flow.exitCode, show(flow)).toBe(0);
    // a server, two logins, a consumer and a flow: slow on a busy machine
  }, 180_000);
  afterAll(async () => {
    await gateway?.close();
  });

  it.each([
    ["oauth call GET", ["oauth", "call", "GET", "/api/crm/v1/events?pagesize=5"], "/api/crm/v1/events"],
    ["oauth whoami", ["oauth", "whoami", "--json"], "/oAuth"],
  ])("%s: the retry has a new nonce and signature, and succeeds", async (_name, args, path) => {
    const before = gateway.seen(path).length;
    gateway.failNext(path);
    const result = await bizctl(args, { env });
    expect(result.exitCode, show(result)).toBe(0);
    const attempts = gateway.seen(path).slice(before);
    expect(attempts).toHaveLength(2);
    expect(attempts.every((a) => a.startsWith("OAuth "))).toBe(true);
    expect(nonceOf(attempts[1]!)).not.toBe(nonceOf(attempts[0]!));
    expect(signatureOf(attempts[1]!)).not.toBe(signatureOf(attempts[0]!));
  });
});
