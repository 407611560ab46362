import { mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { configDir } from "./paths.js";

export const EMBEDDED = "embedded";
export const DEFAULT_PROFILE = "default";

export interface StoredToken {
  token: string;
  expiresAt: string;
  user: { id: string; userName: string; roles: string[] };
}

/** OAuth token credentials obtained with `bizctl oauth access-token` or `oauth flow`; they sign `oauth` calls. */
export interface StoredOAuth {
  consumerKey: string;
  consumerSecret: string;
  token: string;
  tokenSecret: string;
  /** the user who approved them, as the server reported it */
  user?: { id: string; userName: string; roles: string[] };
  obtainedAt: string;
  /** how they sign when it is not HMAC-SHA1: HMAC-SHA256, or RSA-SHA1 with the key in `privateKeyFile` */
  signatureMethod?: string;
  /** RSA-SHA1: the absolute path of the consumer's PEM private key (the key itself is never copied here) */
  privateKeyFile?: string;
}

export interface Profile {
  /** `embedded` or the base URL of a remote server */
  server: string;
  /** the embedded server's data dir; default `$BIZCTL_DATA_DIR` or the XDG data dir */
  dataDir?: string;
  auth?: StoredToken;
  oauth?: StoredOAuth;
}

interface ConfigFile {
  currentProfile?: string;
  profiles?: Record<string, Profile>;
}

type Env = Record<string, string | undefined>;

/** Another process held the profile file's lock past every retry: nothing was changed. */
export class ProfilesLockedError extends Error {
  constructor(readonly file: string) {
    super(`Another bizctl kept ${file} locked for too long; nothing was changed.`);
    this.name = "ProfilesLockedError";
  }
}

/**
 * Writers of the profile file hold a lock (proper-lockfile: a `config.json.lock` directory whose
 * mtime the holder keeps fresh) around their read-change-write, so that concurrent runs do not
 * lose each other's profiles. A lock whose holder was killed goes stale after this long and the
 * next writer takes it over; the retries wait a little longer than that.
 */
const LOCK_STALE_MS = 5_000;
const LOCK_RETRIES = { retries: 40, factor: 1.2, minTimeout: 20, maxTimeout: 1000, randomize: true };

/**
 * Profiles in `<config dir>/config.json`. Reads parse the file directly, since every command
 * reads its profile and loading conf costs more than the command; writes go through conf,
 * which writes atomically (a temporary file renamed over it) with mode 0600, under the lock above.
 */
export class ProfileStore {
  readonly file: string;
  private cache?: ConfigFile;

  constructor(private readonly env: Env) {
    this.file = join(configDir(env), "config.json");
  }

  private read(): ConfigFile {
    if (!this.cache) {
      try {
        this.cache = JSON.parse(readFileSync(this.file, "utf8")) as ConfigFile;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
          throw new Error(`Cannot read ${this.file}: ${(error as Error).message}`);
        }
        this.cache = {};
      }
    }
    return this.cache;
  }

  /** The file's permission bits as `0600`, or undefined when there is no file yet. */
  fileMode(): string | undefined {
    try {
      return `0${(statSync(this.file).mode & 0o777).toString(8)}`;
    } catch {
      return undefined;
    }
  }

  all(): Record<string, Profile> {
    return { [DEFAULT_PROFILE]: { server: EMBEDDED }, ...this.read().profiles };
  }

  get(name: string): Profile | undefined {
    const all = this.all();
    // own members only: `constructor` is a profile name like any other, not a member every object has
    return Object.hasOwn(all, name) ? all[name] : undefined;
  }

  current(): string {
    return this.read().currentProfile ?? DEFAULT_PROFILE;
  }

  /** `--profile`, then `BIZCTL_PROFILE`, then the profile marked current. */
  select(flag: string | undefined): string {
    return flag || this.env.BIZCTL_PROFILE || this.current();
  }

  async save(name: string, profile: Profile): Promise<void> {
    await this.write((config) => {
      config.profiles = { ...config.profiles, [name]: profile };
    });
  }

  async remove(name: string): Promise<void> {
    await this.write((config) => {
      const { [name]: _gone, ...rest } = config.profiles ?? {};
      config.profiles = rest;
      if (config.currentProfile === name) config.currentProfile = undefined;
    });
  }

  async use(name: string): Promise<void> {
    await this.write((config) => {
      config.currentProfile = name;
    });
  }

  private async write(change: (config: ConfigFile) => void): Promise<void> {
    const [{ default: Conf }, { default: lockfile }] = await Promise.all([import("conf"), import("proper-lockfile")]);
    // the lock directory goes beside the file: the config dir must exist first
    mkdirSync(configDir(this.env), { recursive: true, mode: 0o700 });
    let release: () => Promise<void>;
    try {
      release = await lockfile.lock(this.file, { realpath: false, stale: LOCK_STALE_MS, retries: LOCK_RETRIES });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ELOCKED") throw error;
      throw new ProfilesLockedError(this.file);
    }
    try {
      this.writeLocked(Conf, change);
    } finally {
      await release();
    }
  }

  /** Reads the file afresh (another process may have changed it), applies the change, writes it back. */
  private writeLocked(Conf: typeof import("conf").default, change: (config: ConfigFile) => void): void {
    const conf = new Conf<ConfigFile>({
      projectName: "bizctl",
      cwd: configDir(this.env),
      configName: "config",
      configFileMode: 0o600,
      accessPropertiesByDotNotation: false,
      clearInvalidConfig: false,
    });
    const next: ConfigFile = structuredClone(conf.store);
    change(next);
    if (next.currentProfile === undefined) delete next.currentProfile;
    conf.store = next;
    this.cache = next;
  }
}
