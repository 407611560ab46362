import type { EventEmitter } from "node:events";
import { Command, CommanderError, Option } from "commander";
import { checkGlobals, type GlobalOptions } from "./cli/command-context.js";
import { describeError, EXIT, exitCodeFor, messagesBefore, UsageError } from "./cli/errors.js";
import { helpWidth, reflowHelp } from "./cli/help-text.js";
import { chosenProfile, profileFlag, scoped } from "./cli/hints.js";
import { type IO, processIO, writeLine } from "./cli/io.js";
import { terminalJson } from "./cli/terminal-text.js";
import { closeContexts } from "./commands/verb-helpers.js";
import { API_TOKEN_PREFIX } from "./contract/api-tokens.js";
import { restoreV8Flags } from "./v8-flags.js";

declare const BIZCTL_VERSION: string;
const VERSION = typeof BIZCTL_VERSION === "string" ? BIZCTL_VERSION : "0.0.0-dev";

type Group = { register(program: Command, io: IO): void };

/**
 * The command groups in the order `bizctl --help` lists them, each loaded on demand: a command
 * line builds only the group it names (see groupNamed), so that it neither compiles nor builds
 * the other ten.
 */
const GROUPS = {
  auth: () => import("./commands/auth/index.js"),
  oauth: () => import("./commands/oauth/index.js"),
  resources: () => import("./commands/resources/index.js"),
  users: () => import("./commands/users/index.js"),
  groups: () => import("./commands/groups/index.js"),
  events: () => import("./commands/events/index.js"),
  audit: () => import("./commands/audit/index.js"),
  access: () => import("./commands/access/index.js"),
  server: () => import("./commands/server/index.js"),
  profile: () => import("./commands/profile/index.js"),
  "service-accounts": () => import("./commands/service-accounts/index.js"),
  api: () => import("./commands/api/index.js"),
  completion: () => import("./commands/completion/index.js"),
  help: () => import("./commands/help/index.js"),
} satisfies Record<string, () => Promise<Group>>;

export type GroupName = keyof typeof GROUPS;

/** The global options that take a value as the next word (`--profile work`, `-o json`). */
const VALUED_GLOBALS = new Set(["--profile", "--server", "-o", "--output", "--fields", "--query"]);

/**
 * The group whose command a command line runs: its first word that is not a global option (nor
 * an option's value). Undefined when there is none, or when it needs every group: `help` and
 * `completion` walk the whole tree, and a misspelt name is answered with the names it resembles.
 */
export function groupNamed(argv: readonly string[]): GroupName | undefined {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "--") return undefined;
    if (word.startsWith("-")) {
      if (VALUED_GLOBALS.has(word)) i++;
      continue;
    }
    if (word === "help" || word === "completion" || !Object.hasOwn(GROUPS, word)) return undefined;
    return word as GroupName;
  }
  return undefined;
}

/** The whole command tree, or the global options and `only` when a command line needs no more. */
export async function buildProgram(io: IO, only?: GroupName): Promise<Command> {
  const program = new Command("bizctl")
    .description("Administer the Enterprise Business API: auth, oauth, resources, events")
    .version(VERSION, "-V, --version")
    .option("--profile <name>", "profile to use (default: $BIZCTL_PROFILE, then the current one)")
    .option("--server <url>", "one-off server: http(s)://host[:port] or 'embedded'")
    .addOption(
      new Option(
        "-o, --output <format>",
        "table, json, ndjson, csv or yaml (default: table on a terminal, else json)",
        // every -o is kept: checkGlobals() refuses two that differ instead of taking the last
      ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
    )
    .option("--json", "same as -o json")
    .option("--fields <list>", "comma-separated fields to show (dotted paths: name.givenName, emails.value)")
    .option("--query <expr>", "JMESPath expression applied to the result before it is printed")
    .option("--no-color", "no colours (NO_COLOR is honoured too)")
    .option("-q, --quiet", "no messages on stderr, only results and errors")
    .option("--verbose", "trace HTTP calls on stderr (credentials masked)")
    .option("-y, --yes", "answer yes to confirmations")
    .option("--no-input", "never prompt; fail with exit code 2 when a value is missing")
    .showSuggestionAfterError()
    .exitOverride()
    // help (the only text Commander writes) fits the terminal it is written to, whatever its width
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      writeOut: (text) => io.stdout.write(reflowHelp(text, helpWidth(io.stdout))),
      writeErr: (text) => io.stderr.write(reflowHelp(text, helpWidth(io.stderr))),
      getOutHelpWidth: () => helpWidth(io.stdout),
      getErrHelpWidth: () => helpWidth(io.stderr),
      outputError: () => {},
    });
  // the global options are checked once, before any action: a bad one reads, sends and changes nothing
  program.hook("preAction", () => {
    const checked = checkGlobals(program.opts<GlobalOptions>());
    program.setOptionValue("output", checked.output);
  });
  // Commander reads an option's environment variable (`--data-dir`, BIZCTL_DATA_DIR) from
  // process.env; a run handed another environment (a test running commands in its own process)
  // takes them from that one, so that nothing of the process's own leaks into it
  if (io.env !== process.env) {
    program.hook("preAction", (_program, action) => {
      // each command of the line reads its own options' variables (`server outbox --data-dir`)
      for (let command: Command | null = action; command; command = command.parent) optionsFromEnv(command, io.env);
    });
  }
  const names = only ? [only] : (Object.keys(GROUPS) as GroupName[]);
  const groups: Group[] = await Promise.all(names.map((name) => GROUPS[name]()));
  for (const group of groups) group.register(program, io);
  for (const command of program.commands) command.configureOutput(program.configureOutput());
  // a usage error's hint names the help of the command that refused the line (`bizctl users --help`)
  const remember = (command: Command): void => {
    command.exitOverride((error) => {
      refusedBy.set(error, command);
      if (error.code !== "commander.executeSubCommandAsync") throw error;
    });
    for (const sub of command.commands) remember(sub);
  };
  remember(program);
  return program;
}

/** The command whose parsing raised each Commander error. */
const refusedBy = new WeakMap<CommanderError, Command>();

/** `see 'bizctl users --help'`: the help of the command that refused the line. */
function helpHint(error: CommanderError): string {
  const names: string[] = [];
  for (let command = refusedBy.get(error); command?.parent; command = command.parent) names.unshift(command.name());
  return `see '${["bizctl", ...names, "--help"].join(" ")}'`;
}

/**
 * Gives the env-backed options of `command` the values of `env` instead of process.env's, as
 * Commander would: a value from the command line stays, and the option's own listener reads the
 * value (the boolean flags' one too: addBooleanFlag, server/options.ts).
 */
function optionsFromEnv(command: Command, env: IO["env"]): void {
  for (const option of command.options) {
    if (!option.envVar) continue;
    const key = option.attributeName();
    if (command.getOptionValueSource(key) === "env")
      command.setOptionValueWithSource(key, option.defaultValue, "default");
    const value = env[option.envVar];
    const unset = command.getOptionValue(key) === undefined || command.getOptionValueSource(key) === "default";
    // a Command is an EventEmitter, which Commander's types do not say
    const emitter = command as Command & Pick<EventEmitter, "emit">;
    if (value !== undefined && unset) emitter.emit(`optionEnv:${option.name()}`, value);
  }
}

function wantsJsonErrors(argv: string[], io: IO): boolean {
  const asksJson = argv.some(
    (a, i) =>
      a === "--json" ||
      /^(-ojson|--output=json)$/i.test(a) ||
      ((a === "-o" || a === "--output") && argv[i + 1]?.toLowerCase() === "json"),
  );
  return asksJson || !io.stderr.isTTY;
}

/** The credential refusals that BIZCTL_TOKEN, which overrides the stored token, is to blame for. */
const REFUSED_TOKEN = new Set(["token_invalid", "token_expired", "token_revoked"]);

function report(io: IO, argv: string[], error: unknown, exitCode: number): void {
  const described = describeError(error);
  if (io.env.BIZCTL_TOKEN && REFUSED_TOKEN.has(described.code)) {
    // logging in again would not help: the environment's token would still be sent
    described.hint = io.env.BIZCTL_TOKEN.startsWith(API_TOKEN_PREFIX)
      ? "BIZCTL_TOKEN holds an API token the server refused: set it to a live one ('bizctl auth tokens create'), or unset it"
      : "BIZCTL_TOKEN holds a token the server refused: set it to a fresh one ('bizctl auth token' after 'bizctl auth login'), or unset it";
  }
  // a hint is copied into the next command line: it names the profile this one chose
  if (described.hint) described.hint = scoped(described.hint, chosenProfile(profileFlag(argv), io.env));
  if (wantsJsonErrors(argv, io)) {
    // the same JSON with C1 and bidi controls escaped: a message may quote stored data
    const messages = messagesBefore(error);
    const report = { error: { ...described, exitCode, ...(messages && { messages }) } };
    io.stderr.write(`${terminalJson(JSON.stringify(report))}\n`);
    return;
  }
  // field errors that only repeat the message are not printed twice
  const extra = described.errors?.filter((e) => !described.message.includes(e.message)) ?? [];
  const fields = extra.length ? ` [${extra.map((e) => `${e.path}: ${e.message}`).join("; ")}]` : "";
  writeLine(io, `error: ${described.message}${fields}${described.hint ? ` — ${described.hint}` : ""}`);
}

/** Runs one command line and returns its exit code; it never exits the process itself. */
export async function run(argv: string[], io: IO = processIO()): Promise<number> {
  const program = await buildProgram(io, groupNamed(argv.slice(2)));
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return EXIT.ok;
      if (error.code === "commander.help" || error.code === "commander.executeSubCommandAsync") return EXIT.usage;
      // Commander puts its suggestion on a line of its own: one line here, as every other error
      const message = error.message.replace(/^error: /, "").replace(/\s*\n\s*/g, " ");
      report(io, argv, new UsageError(message, helpHint(error)), EXIT.usage);
      return EXIT.usage;
    }
    if ((error as Error)?.name === "ExitPromptError" || (error as Error)?.name === "AbortPromptError") {
      return EXIT.interrupted;
    }
    const exitCode = exitCodeFor(error);
    report(io, argv, error, exitCode);
    return exitCode;
  } finally {
    await closeContexts(program);
    restoreV8Flags();
  }
}
