import { Command, CommanderError, Option } from "commander";
import { checkGlobals, type GlobalOptions } from "./cli/context.js";
import { describeError, EXIT, exitCodeFor, UsageError } from "./cli/errors.js";
import { type IO, processIO, writeLine } from "./cli/io.js";
import { terminalJson } from "./cli/terminal-text.js";
import * as api from "./commands/api/index.js";
import * as audit from "./commands/audit/index.js";
import * as auth from "./commands/auth/index.js";
import * as completion from "./commands/completion/index.js";
import * as events from "./commands/events/index.js";
import * as help from "./commands/help/index.js";
import * as oauth from "./commands/oauth/index.js";
import * as profile from "./commands/profile/index.js";
import * as resources from "./commands/resources/index.js";
import * as server from "./commands/server/index.js";
import { openContexts } from "./commands/shared.js";
import * as users from "./commands/users/index.js";

declare const BIZCTL_VERSION: string;
const VERSION = typeof BIZCTL_VERSION === "string" ? BIZCTL_VERSION : "0.0.0-dev";

export function buildProgram(io: IO): Command {
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
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: () => {},
    });
  // the global options are checked once, before any action: a bad one reads, sends and changes nothing
  program.hook("preAction", () => {
    const checked = checkGlobals(program.opts<GlobalOptions>());
    program.setOptionValue("output", checked.output);
  });
  for (const group of [auth, oauth, resources, users, events, audit, server, profile, api, completion, help])
    group.register(program, io);
  for (const command of program.commands) command.exitOverride().configureOutput(program.configureOutput());
  return program;
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
    described.hint =
      "BIZCTL_TOKEN holds a token the server refused: set it to a fresh one ('bizctl auth token' after 'bizctl auth login'), or unset it";
  }
  if (wantsJsonErrors(argv, io)) {
    // the same JSON with C1 and bidi controls escaped: a message may quote stored data
    io.stderr.write(`${terminalJson(JSON.stringify({ error: { ...described, exitCode } }))}\n`);
    return;
  }
  // field errors that only repeat the message are not printed twice
  const extra = described.errors?.filter((e) => !described.message.includes(e.message)) ?? [];
  const fields = extra.length ? ` [${extra.map((e) => `${e.path}: ${e.message}`).join("; ")}]` : "";
  writeLine(io, `error: ${described.message}${fields}${described.hint ? ` — ${described.hint}` : ""}`);
}

/** Runs one command line and returns its exit code; it never exits the process itself. */
export async function run(argv: string[], io: IO = processIO()): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return EXIT.ok;
      if (error.code === "commander.help" || error.code === "commander.executeSubCommandAsync") return EXIT.usage;
      const message = error.message.replace(/^error: /, "");
      report(io, argv, new UsageError(message, "see 'bizctl --help'"), EXIT.usage);
      return EXIT.usage;
    }
    if ((error as Error)?.name === "ExitPromptError" || (error as Error)?.name === "AbortPromptError") {
      return EXIT.interrupted;
    }
    const exitCode = exitCodeFor(error);
    report(io, argv, error, exitCode);
    return exitCode;
  } finally {
    for (const ctx of openContexts.splice(0)) await ctx.close().catch(() => {});
  }
}
