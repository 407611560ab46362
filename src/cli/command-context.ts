import type { ApiClient } from "../client/client.js";
import { ApiError, NetworkError } from "../client/errors.js";
import { EMBEDDED, type Profile, ProfileStore, type StoredToken } from "../config/profiles.js";
import { API_TOKEN_PREFIX } from "../contract/api-tokens.js";
import { checkServer, createClient, sameServer, type Target, targetOf, uninitialisedEmbedded } from "./compose.js";
import { AuthError, CliError, EXIT, UsageError } from "./errors.js";
import { checkFields, checkFieldsBeforeWrite } from "./fields.js";
import { chosenProfile, scoped } from "./hints.js";
import { type IO, writeLine } from "./io.js";
import { FORMATS, type Format, type RenderOptions, render } from "./output.js";
import { promptConfirm } from "./prompts.js";
import { terminalText } from "./terminal-text.js";

export interface GlobalOptions {
  profile?: string;
  server?: string;
  /** every `-o` given, in order (checkGlobals() leaves the one format they agree on) */
  output?: string | string[];
  json?: boolean;
  fields?: string;
  query?: string;
  color?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  yes?: boolean;
  input?: boolean;
}

/** A page of a list that has more after it: what the footer says. */
export interface MorePages {
  shown: number;
  total: number;
  /** the flag that fetches the next page: `--page 2`, `--start-index 51` */
  next: string;
}

export interface Credential {
  token: string;
  source: "BIZCTL_TOKEN" | "profile";
  stored?: StoredToken;
}

/**
 * The output flags name one format: `-o` is case-insensitive, `--json` counts as `-o json`, and
 * flags that name different formats are refused rather than one silently winning, since a script
 * that parses JSON and gets YAML breaks further on, where the cause is harder to see.
 */
export function chosenFormat(globals: Pick<GlobalOptions, "output" | "json">): Format | undefined {
  const given = [globals.output ?? []].flat().map((f) => ({ flag: `-o ${f}`, format: f.toLowerCase() }));
  if (globals.json) given.push({ flag: "--json", format: "json" });
  for (const { format } of given) {
    if (!(FORMATS as readonly string[]).includes(format)) {
      throw new UsageError(`Unknown output format '${format}'; use one of ${FORMATS.join(", ")}.`);
    }
  }
  const differing = given.find((g) => g.format !== given[0]?.format);
  if (differing) {
    throw new UsageError(
      `${given[0]?.flag} and ${differing.flag} ask for different output formats.`,
      "give one output format (--json is -o json)",
    );
  }
  return given[0]?.format as Format | undefined;
}

/**
 * Checks the global options before any command runs, so that a bad one fails (exit 2) before
 * anything is read, sent or changed; returns them with `output` reduced to the one format.
 */
export function checkGlobals(globals: GlobalOptions): GlobalOptions {
  if (globals.server !== undefined) checkServer(globals.server, "--server");
  return { ...globals, output: chosenFormat(globals) };
}

/** The seam every command receives: terminal, profile, client and renderer, each made on first use. */
/** The most messages a command holds back (see Context.info); beyond them it says them as they come. */
const MAX_HELD_MESSAGES = 200;

export class Context {
  private profileStore?: ProfileStore;
  private apiClient?: Promise<ApiClient>;
  /**
   * With stderr not a terminal, a script reads it: a failure must be one JSON object, so what the
   * command says is held until it ends, written as lines when it succeeds, and carried in the
   * error's `messages` when it fails.
   */
  private held: string[] | undefined;

  constructor(
    readonly io: IO,
    readonly globals: GlobalOptions,
    /** the command's group (`events`, `users`...): whose records `--fields` is checked against */
    readonly group?: string,
  ) {
    if (!io.stderr.isTTY) this.held = [];
  }

  /**
   * Says what was held back and stops holding: at the end of a command that succeeded, and
   * before a command runs until it is stopped (a server, a follow), whose messages a log shows
   * as they happen.
   */
  sayHeldMessages(): void {
    const held = this.held;
    this.held = undefined;
    for (const line of held ?? []) writeLine(this.io, line);
  }

  /** The messages held back, for the failure that ends the command; holding stops. */
  takeHeldMessages(): string[] {
    const held = this.held ?? [];
    this.held = undefined;
    return held;
  }

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

  /** `--server` when it names another server than the profile's: a one-off, which no stored credential reaches. */
  get serverOverride(): string | undefined {
    const server = this.globals.server;
    return server !== undefined && !sameServer(server, this.profile.server) ? server : undefined;
  }

  /**
   * A command that would store a credential refuses a one-off server: `--server` never writes a
   * profile (it would turn the profile's server into the override for every later command).
   */
  refuseServerOverride(what: string): void {
    const server = this.serverOverride;
    if (!server) return;
    throw new UsageError(
      `${what} keeps credentials in a profile, and --server ${server} is a one-off that never writes one.`,
      `add a profile for it: 'bizctl profile add NAME --server ${server}', then 'bizctl --profile NAME ${what}'`,
    );
  }

  /**
   * `BIZCTL_TOKEN`, else the profile's stored token. A one-off `--server` that differs from the
   * profile's gets no stored token, so a credential never travels to a server it was not issued by.
   */
  credential(): Credential | undefined {
    const envToken = this.io.env.BIZCTL_TOKEN;
    if (envToken) return { token: envToken, source: "BIZCTL_TOKEN" };
    const profile = this.profile;
    if (this.serverOverride) return undefined;
    if (!profile.auth) return undefined;
    return { token: profile.auth.token, source: "profile", stored: profile.auth };
  }

  /** Why there is no credential, and how to get one: a one-off --server is told apart. */
  notLoggedIn(): AuthError {
    const server = this.serverOverride;
    if (!server) return new AuthError(`Not logged in (profile '${this.profileName}').`);
    return new AuthError(
      `No credential for --server ${server}: the token stored in profile '${this.profileName}' is never sent to a one-off server, only BIZCTL_TOKEN is.`,
      `set BIZCTL_TOKEN to a token of that server, or 'bizctl profile add NAME --server ${server}' and 'bizctl --profile NAME auth login'`,
    );
  }

  /** The server's "no token" answer to a one-off --server says why there was none. */
  explain(error: unknown): unknown {
    const missing = error instanceof ApiError && error.problem.code === "token_missing";
    if (missing && this.serverOverride && !this.credential()) return this.notLoggedIn();
    // the URL that failed was typed on this line, not kept in the profile
    if (error instanceof NetworkError && this.globals.server !== undefined) {
      return new CliError(error.message, EXIT.unavailable, "server_unreachable", "check the --server URL");
    }
    return error;
  }

  requireCredential(): Credential {
    const credential = this.credential();
    if (!credential) throw uninitialisedEmbedded(this.target) ?? this.notLoggedIn();
    if (credential.stored && Date.parse(credential.stored.expiresAt) <= Date.now()) {
      // an API token kept by `auth login --with-token` is replaced by a new token, not a login
      if (credential.token.startsWith(API_TOKEN_PREFIX)) {
        throw new AuthError(
          `The API token kept in profile '${this.profileName}' expired at ${credential.stored.expiresAt}.`,
          "create a new one ('bizctl auth tokens create') and keep it with 'bizctl auth login --with-token'",
        );
      }
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
    return chosenFormat(this.globals) ?? (this.io.stdout.isTTY ? "table" : "json");
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

  /** Before a write: an unknown --fields field that the schema of what is written can tell exits 7 first. */
  checkFieldsBeforeWrite(resourceType?: unknown): void {
    checkFieldsBeforeWrite(this.fields(), this.group, resourceType);
  }

  /** Results go to stdout, and nothing else does. */
  async print(data: unknown, columns?: string[]): Promise<void> {
    const fields = this.fields();
    checkFields(fields, data, this.group);
    this.io.stdout.write(
      await this.render(data, { format: this.format(), fields, query: this.globals.query, columns }),
    );
  }

  /**
   * The one way a command renders data: fitted to the terminal's width (none piped, or when the
   * terminal reports 0 columns), coloured and made safe for it when stdout is one.
   */
  render(
    data: unknown,
    options: Pick<RenderOptions, "format" | "fields" | "query" | "columns" | "shown" | "header">,
  ): Promise<string> {
    const stdout = this.io.stdout;
    return render(data, {
      ...options,
      width: stdout.isTTY ? stdout.columns : undefined,
      color: this.color,
      terminal: Boolean(stdout.isTTY),
    });
  }

  /**
   * A list: the records on stdout; on stderr, that there are none ("No events."), or how many of
   * how many were shown and how to get the rest. Piped too: a script that reads one page of many
   * must be told it got less than there is (stdout stays the records alone).
   */
  async printList(rows: unknown[], columns: string[] | undefined, noun: string, more?: MorePages): Promise<void> {
    await this.print(rows, columns);
    if (rows.length === 0) this.info(`No ${noun}.`);
    else if (more && more.shown < more.total) {
      this.info(`${more.shown} of ${more.total}: ${more.next}, or --all`);
    }
  }

  /** A text result (an e-mail, a token): exact when piped, control characters made visible on a terminal. */
  printText(text: string): void {
    this.io.stdout.write(this.io.stdout.isTTY ? terminalText(text, { newlines: true, tabs: true }) : text);
  }

  /**
   * Messages and progress go to stderr; `--quiet` silences them. A command they name carries the
   * profile this command line chose, as an error's hint does.
   */
  info(message: string): void {
    if (this.globals.quiet) return;
    const line = scoped(message, chosenProfile(this.globals.profile, this.io.env));
    if (this.held && this.held.length < MAX_HELD_MESSAGES) this.held.push(line);
    else {
      this.sayHeldMessages();
      writeLine(this.io, line);
    }
  }

  /** Whether a person can be asked; if so, what was held back is said first, as it leads to the question. */
  canPrompt(): boolean {
    const can = this.globals.input !== false && Boolean(this.io.stdin.isTTY && this.io.stdout.isTTY);
    if (can) this.sayHeldMessages();
    return can;
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
