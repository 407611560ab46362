// The fixture every measure shares: a data dir with the first admin, a running `server start`, a remote
// and an embedded CLI profile logged in, and EVENT_COUNT events.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { BIN, EVENT_COUNT, LISTENING, PASSWORD, ROOT } from "./config.mjs";
import { run, startBackground } from "./processes.mjs";
import { progress } from "./report.mjs";

export function gitState() {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "bin", "scripts"], {
      cwd: ROOT,
      encoding: "utf8",
    }).trim();
    return `${commit}${dirty ? " + uncommitted changes in src/bin/scripts" : ""}`;
  } catch {
    return "unknown";
  }
}

export function parseEvents(stdout, what) {
  let list;
  try {
    list = JSON.parse(stdout);
  } catch {
    throw new Error(`${what}: stdout is not JSON: ${stdout.slice(0, 300)}`);
  }
  if (!Array.isArray(list) || list.length !== EVENT_COUNT)
    throw new Error(`${what}: expected an array of ${EVENT_COUNT} events, got ${stdout.slice(0, 300)}`);
  return list;
}

export async function setUp(dir) {
  const dataDir = join(dir, "data");
  // Nothing of the caller's bizctl setup leaks in; XDG dirs point into the temp dir too.
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("BIZCTL_")));
  // the code cache too: the bench starts without one, and the set-up's commands write it
  Object.assign(base, {
    XDG_CONFIG_HOME: join(dir, "xdg-config"),
    XDG_DATA_HOME: join(dir, "xdg-data"),
    XDG_CACHE_HOME: join(dir, "xdg-cache"),
  });
  const remoteEnv = { ...base, BIZCTL_CONFIG_DIR: join(dir, "config-remote"), BIZCTL_DATA_DIR: dataDir };
  const embeddedEnv = { ...base, BIZCTL_CONFIG_DIR: join(dir, "config-embedded"), BIZCTL_DATA_DIR: dataDir };

  progress("setting up: server init, server start, profile, login, events");
  await run([BIN, "server", "init", "--data-dir", dataDir, "--password-stdin"], {
    env: remoteEnv,
    input: `${PASSWORD}\n`,
  });
  const server = await startBackground(
    "bizctl server",
    [BIN, "server", "start", "--port", "0", "--data-dir", dataDir],
    {
      env: remoteEnv,
      pattern: LISTENING,
      logFile: join(dir, "server.log"),
    },
  );
  await run([BIN, "profile", "add", "r", "--server", server.url, "--use"], { env: remoteEnv });
  await run([BIN, "auth", "login", "--user", "admin", "--password-stdin"], {
    env: remoteEnv,
    input: `${PASSWORD}\n`,
  });
  const codes = Array.from({ length: EVENT_COUNT }, (_, i) => `E${i + 1}`);
  for (let i = 0; i < codes.length; i += 4) {
    await Promise.all(
      codes.slice(i, i + 4).map((code) =>
        run(
          [
            BIN,
            "events",
            "create",
            "--set",
            `code=${code}`,
            "--set",
            "name=x",
            "--set",
            "startsAt=2027-01-10T09:00:00Z",
          ],
          {
            env: remoteEnv,
          },
        ),
      ),
    );
  }
  // the embedded side: its own config dir, whose `default` profile is embedded on the same data dir
  const embeddedLogin = await run([BIN, "auth", "login", "--user", "admin", "--password-stdin"], {
    env: embeddedEnv,
    input: `${PASSWORD}\n`,
  });
  const loggedInTo = JSON.parse(embeddedLogin.stdout).server;
  if (!String(loggedInTo).startsWith("embedded")) throw new Error(`the embedded login went to ${loggedInTo}`);

  const token = (await run([BIN, "auth", "token"], { env: remoteEnv })).stdout.trim();
  // both modes see the same data
  const remote = parseEvents((await run([BIN, "events", "list", "--json"], { env: remoteEnv })).stdout, "remote list");
  const embedded = parseEvents(
    (await run([BIN, "events", "list", "--json"], { env: embeddedEnv })).stdout,
    "embedded list",
  );
  if (JSON.stringify(remote) !== JSON.stringify(embedded))
    throw new Error("the remote and embedded `events list` differ: not the same data dir?");
  return { base, remoteEnv, embeddedEnv, server, token, dataDir };
}
