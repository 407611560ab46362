import { DEFAULT_PASSWORD_MIN_LENGTH, PASSWORD_RULES, passwordShapeProblem } from "../contract/passwords.js";
import { UsageError } from "./errors.js";
import { type IO, stdinLine, writeLine } from "./io.js";
import { promptPassword } from "./prompts.js";

export interface PasswordSource {
  /** `--password-stdin`: line `index` of stdin */
  stdin?: boolean;
  index: number;
  /** an environment variable allowed for this value */
  env?: string;
  prompt: string;
  canPrompt: boolean;
  /** whose password it is: a new one containing the name is refused at the first entry */
  userName?: string;
}

/** A password from stdin, the environment or a hidden prompt; never from a flag value. */
export async function readPassword(io: IO, source: PasswordSource): Promise<string | undefined> {
  if (source.stdin) return stdinLine(io, source.index);
  const fromEnv = source.env ? io.env[source.env] : undefined;
  if (fromEnv) return fromEnv;
  if (source.canPrompt) return promptPassword(io, source.prompt);
  return undefined;
}

/** What stdin lacked, for a `--password-stdin` that found no (or an empty) line `index`. */
export function emptyStdin(what: string, index: number): UsageError {
  const where = index === 0 ? "stdin is empty" : `stdin has no line ${index + 1}`;
  return new UsageError(
    `--password-stdin was given, but ${where}: ${what} was expected there.`,
    index === 0 ? "write it as the first line of stdin" : "give one value per line of stdin, in the order asked for",
  );
}

export async function requirePassword(io: IO, source: PasswordSource): Promise<string> {
  const value = await readPassword(io, source);
  if (!value && source.stdin) throw emptyStdin(`the ${source.prompt.toLowerCase()}`, source.index);
  if (!value) {
    const ways = ["--password-stdin", source.env].filter(Boolean).join(" or ");
    throw new UsageError(`${source.prompt} is required and there is no terminal to ask on.`, `pass it with ${ways}`);
  }
  return value;
}

/**
 * A new password, typed twice on a terminal. The rules the CLI can check alone (length, repetition,
 * the user name) refuse the first entry before the confirmation is asked for; the server's own
 * minimum is at least the default one, and its other refusals are answered after.
 */
export async function readNewPassword(io: IO, source: PasswordSource): Promise<string | undefined> {
  if (source.stdin || !source.canPrompt) return readPassword(io, { ...source, env: undefined });
  writeLine(io, PASSWORD_RULES);
  const rules = { minLength: DEFAULT_PASSWORD_MIN_LENGTH, userName: source.userName };
  for (;;) {
    const first = await promptPassword(io, source.prompt, (value) => passwordShapeProblem(value, rules) ?? true);
    const second = await promptPassword(io, "Repeat it");
    if (first === second) return first;
    writeLine(io, "The two entries differ; try again.");
  }
}
