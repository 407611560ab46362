import { existsSync } from "node:fs";
import { join } from "node:path";
import { ApiClient } from "../client/client.js";
import type { Transport } from "../client/transport.js";
import { defaultDataDir } from "../config/paths.js";
import { EMBEDDED, type Profile } from "../config/profiles.js";
import { resolveSecretKey } from "../config/secret-key.js";
import { asNotInitialised, CliError, EXIT, UsageError } from "./errors.js";

export interface Target {
  server: string;
  dataDir: string;
  /** the embedded server's base for e-mailed links, as `server start --public-url` */
  publicUrl?: string;
  /** where the embedded server finds the deployment secret, as the `server` commands do */
  env: Record<string, string | undefined>;
}

export function targetOf(
  profile: Profile,
  serverOverride: string | undefined,
  env: Record<string, string | undefined>,
): Target {
  return {
    server: serverOverride || profile.server,
    dataDir: profile.dataDir || defaultDataDir(env),
    publicUrl: env.BIZCTL_PUBLIC_URL,
    env,
  };
}

/**
 * A server is `embedded` or an http(s) URL with a host. `localhost:8080` parses as a URL of the
 * scheme `localhost:`, so the scheme is checked by name, and the message shows the likely fix.
 */
export function checkServer(server: string, what: string): void {
  if (server === EMBEDDED) return;
  const fix = "use http(s)://host[:port] or 'embedded'";
  if (!/^https?:\/\//i.test(server)) {
    const guess = /^[\w.-]+(:\d+)?(\/|$)/.test(server) ? ` (http://${server}?)` : "";
    throw new UsageError(`${what} '${server}' needs a scheme: http:// or https://${guess}.`, fix);
  }
  let url: URL | undefined;
  try {
    url = new URL(server);
  } catch {
    // reported below
  }
  if (!url?.hostname) throw new UsageError(`${what} '${server}' is not a valid URL.`, fix);
}

/** Whether two server settings name the same server (`http://h:1` and `http://H:1/` do). */
export function sameServer(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}

/**
 * The quotas of atomic event imports in embedded mode: the variables `server start` reads, where
 * they are set (its defaults otherwise).
 */
function embeddedImportQuota(env: Record<string, string | undefined>) {
  const read = (name: string, unit = 1) => {
    const value = env[name];
    if (value === undefined || value === "") return undefined;
    if (!/^[1-9][0-9]{0,8}$/.test(value))
      throw new UsageError(`${name} must be a whole number above 0, not '${value}'.`);
    return Number(value) * unit;
  };
  return {
    maxItems: read("BIZCTL_IMPORT_MAX_ITEMS"),
    maxBytes: read("BIZCTL_IMPORT_MAX_MB", 1024 * 1024),
    maxOpen: read("BIZCTL_IMPORT_MAX_OPEN"),
  };
}

/**
 * The only place that knows both modes exist. The server code is imported here, lazily, and only
 * for the embedded mode; a remote call loads undici and nothing of the server.
 */
export async function createTransport(
  target: Target,
  options: { onRetry?: (message: string) => void; serverLogLevel?: string },
): Promise<Transport> {
  if (target.server === EMBEDDED) {
    const { buildApp } = await import("../server/entry.js");
    // pino's stderr destination is loaded only when the server's log is wanted (--verbose)
    const log = options.serverLogLevel
      ? { level: options.serverLogLevel, stream: (await import("pino")).destination(2) }
      : (false as const);
    const { secretKey, error } = resolveSecretKey(target.env.BIZCTL_SECRET_KEY_FILE, target.env);
    if (error) throw new UsageError(error);
    const app = await buildApp({
      dataDir: target.dataDir,
      secretKey,
      publicUrl: target.publicUrl,
      log,
      compileSchemasOnFirstUse: true,
      // one command is one short process: better-sqlite3's 16 MiB page cache pays off in a server,
      // while a command that walks the whole file (an import of a million events) would fill it,
      // and the command's memory would grow with the database
      sqliteCacheKiB: 4096,
      // a command on a dir that was never initialised would create a database and keys in it,
      // then answer "wrong password" to every login
      requireInitialised: true,
      imports: embeddedImportQuota(target.env),
      // a process per command: what it counts of unknown names must outlive it, as an account's count does
      nameFailuresIn: "data-dir",
    }).catch((error: unknown) => {
      throw asNotInitialised(error, `run '${initCommand(target)}' first`) ?? error;
    });
    const { InjectTransport } = await import("../client/inject-transport.js");
    return new InjectTransport(app, `embedded (${target.dataDir})`);
  }
  checkServer(target.server, "The server");
  const { HttpTransport } = await import("../client/http-transport.js");
  return new HttpTransport(target.server, {
    onRetry: (reason, attempt, wait) => options.onRetry?.(`retrying (${reason}), attempt ${attempt} in ${wait} ms`),
  });
}

/**
 * An embedded data dir without a database, told without building the server: a command that has
 * no credential stops before it builds one, and "not logged in" would send the user to
 * `auth login`, which cannot succeed there.
 */
export function uninitialisedEmbedded(target: Target): CliError | undefined {
  if (target.server !== EMBEDDED) return undefined;
  const file = join(target.dataDir, "bizctl.db");
  if (existsSync(file)) return undefined;
  return new CliError(
    `The data dir ${target.dataDir} was never initialised: there is no database at ${file}.`,
    EXIT.usage,
    "not_initialised",
    `run '${initCommand(target)}' first`,
  );
}

/** The `server init` that prepares the embedded target's data dir. */
function initCommand(target: Target): string {
  if (target.dataDir === defaultDataDir(target.env)) return "bizctl server init";
  const dir = /^[\w@%+=:,./-]+$/.test(target.dataDir) ? target.dataDir : JSON.stringify(target.dataDir);
  return `bizctl server init --data-dir ${dir}`;
}

/** The server's own entry points, for the `server` commands; loaded only when one runs. */
export async function loadServerAdmin() {
  return import("../server/entry.js");
}

export async function createClient(
  target: Target,
  options: {
    authorization: () => string | undefined;
    trace?: (line: string) => void;
    onRetry?: (m: string) => void;
    serverLogLevel?: string;
  },
): Promise<ApiClient> {
  const transport = await createTransport(target, options);
  return new ApiClient(transport, { authorization: options.authorization, trace: options.trace });
}
