import type { ApiClient } from "../client/client.js";
import { EMBEDDED, type Profile, ProfileStore, type StoredToken } from "../config/profiles.js";
import { createClient, type Target, targetOf } from "./compose.js";
import { AuthError, UsageError } from "./errors.js";
import { type IO, writeLine } from "./io.js";
import { FORMATS, type Format, render } from "./output.js";
import { promptConfirm } from "./prompts.js";
import { terminalText } from "./terminal-text.js";

export interface GlobalOptions {
  profile?: string;
  server?: string;
  output?: string;
  json?: boolean;
  fields?: string;
  color?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  yes?: boolean;
  input?: boolean;
}

export interface Credential {
  token: string;
  source: "BIZCTL_TOKEN" | "profile";
  stored?: StoredToken;
}

/** The seam every command receives: terminal, profile, client and renderer, each made on first use. */
export class Context {
  private profileStore?: ProfileStore;
  private apiClient?: Promise<ApiClient>;

  constructor(
    readonly io: IO,
    readonly globals: GlobalOptions,
  ) {}

  get profiles(): ProfileStore {
    this.profileStore ??= new ProfileStore(this.io.env);
    return this.profileStore;
  }

  get profileName(): string {
    return this.profiles.select(this.globals.profile);
  }

  get profile(): Profile {
    const profile = this.profiles.get(this.profileName);
    if (!profile) throw new UsageError(`No profile named '${this.profileName}'.`, "see 'bizctl profile list'");
    return profile;
  }

  get target(): Target {
    return targetOf(this.profile, this.globals.server, this.io.env);
  }

  get isEmbedded(): boolean {
    return this.target.server === EMBEDDED;
  }

  /**
   * `BIZCTL_TOKEN`, else the profile's stored token. A one-off `--server` that differs from the
   * profile's gets no stored token, so a credential never travels to a server it was not issued by.
   */
  credential(): Credential | undefined {
    const envToken = this.io.env.BIZCTL_TOKEN;
    if (envToken) return { token: envToken, source: "BIZCTL_TOKEN" };
    const profile = this.profile;
    if (this.globals.server && this.globals.server !== profile.server) return undefined;
    if (!profile.auth) return undefined;
    return { token: profile.auth.token, source: "profile", stored: profile.auth };
  }

  requireCredential(): Credential {
    const credential = this.credential();
    if (!credential) throw new AuthError(`Not logged in (profile '${this.profileName}').`);
    if (credential.stored && Date.parse(credential.stored.expiresAt) <= Date.now()) {
      throw new AuthError(
        `Your session on profile '${this.profileName}' expired at ${credential.stored.expiresAt}; log in again.`,
      );
    }
    return credential;
  }

  client(): Promise<ApiClient> {
    this.apiClient ??= createClient(this.target, {
      authorization: () => {
        const credential = this.credential();
        return credential ? `Bearer ${credential.token}` : undefined;
      },
      trace: this.globals.verbose ? (line) => writeLine(this.io, line) : undefined,
      onRetry: (message) => this.info(message),
      // the embedded server's own log, on stderr, only when tracing
      serverLogLevel: this.globals.verbose ? "debug" : undefined,
    });
    return this.apiClient;
  }

  format(): Format {
    const chosen = this.globals.json ? "json" : this.globals.output;
    if (chosen) {
      if (!(FORMATS as readonly string[]).includes(chosen)) {
        throw new UsageError(`Unknown output format '${chosen}'; use one of ${FORMATS.join(", ")}.`);
      }
      return chosen as Format;
    }
    return this.io.stdout.isTTY ? "table" : "json";
  }

  fields(): string[] | undefined {
    return this.globals.fields
      ?.split(",")
      .map((f) => f.trim())
      .filter(Boolean);
  }

  get color(): boolean {
    const env = this.io.env;
    if (this.globals.color === false || env.NO_COLOR) return false;
    if (env.FORCE_COLOR && env.FORCE_COLOR !== "0") return true;
    return Boolean(this.io.stdout.isTTY);
  }

  /** Results go to stdout, and nothing else does. */
  async print(data: unknown, columns?: string[]): Promise<void> {
    const text = await render(data, {
      format: this.format(),
      fields: this.fields(),
      columns,
      width: this.io.stdout.columns ?? 100,
      color: this.color,
      terminal: Boolean(this.io.stdout.isTTY),
    });
    this.io.stdout.write(text);
  }

  /** A text result (an e-mail, a token): exact when piped, control characters made visible on a terminal. */
  printText(text: string): void {
    this.io.stdout.write(this.io.stdout.isTTY ? terminalText(text, { newlines: true, tabs: true }) : text);
  }

  /** Messages and progress go to stderr; `--quiet` silences them. */
  info(message: string): void {
    if (!this.globals.quiet) writeLine(this.io, message);
  }

  canPrompt(): boolean {
    return this.globals.input !== false && Boolean(this.io.stdin.isTTY && this.io.stdout.isTTY);
  }

  /** Asks on a terminal; elsewhere only `--yes` consents. */
  async confirm(question: string): Promise<void> {
    if (this.globals.yes) return;
    if (!this.canPrompt()) throw new UsageError(`${question} Refusing without a terminal.`, "pass --yes to confirm");
    if (!(await promptConfirm(this.io, question))) throw new UsageError("Cancelled.");
  }

  async close(): Promise<void> {
    if (this.apiClient) await (await this.apiClient).close();
  }
}
