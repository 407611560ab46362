import { type Command, Option } from "commander";
import { UsageError } from "../../cli/errors.js";
import { defaultDataDir } from "../../config/paths.js";
import { resolveSecretKey } from "../../config/secret-key.js";

/**
 * `--data-dir`, `--database` and `--secret-key-file`, shared by every `server` verb, each with its
 * environment variable. The secret itself is never a flag value (it would show in `ps`): it comes
 * from BIZCTL_SECRET_KEY or a file.
 */
export function storageOptions(command: Command): Command {
  return command
    .addOption(new Option("--data-dir <dir>", "data directory (SQLite file, keys, outbox)").env("BIZCTL_DATA_DIR"))
    .addOption(
      new Option("--database <url>", "postgres://… or a SQLite file (default <data-dir>/bizctl.db)").env(
        "BIZCTL_DATABASE_URL",
      ),
    )
    .addOption(
      new Option(
        "--secret-key-file <file>",
        "file holding the deployment secret that seals the signing keys (default: $BIZCTL_SECRET_KEY)",
      ).env("BIZCTL_SECRET_KEY_FILE"),
    );
}

/** The words a switch's environment variable is read by (and `--trust-proxy`'s old values) */
export const ON_WORDS = new Set(["1", "true", "yes", "on"]);
export const OFF_WORDS = new Set(["", "0", "false", "no", "off"]);

/**
 * Adds a boolean flag whose environment variable is read by value. Commander turns such a flag on
 * whenever the variable is defined, so `BIZCTL_ALLOW_PLAINTEXT_OVER_HTTP=false` would have turned
 * it on; here `false`, `0`, `no`, `off` and empty leave it off, and anything unclear is refused.
 */
export function addBooleanFlag(command: Command, option: Option): Command {
  const variable = option.envVar;
  command.addOption(option);
  if (!variable) return command;
  // Commander emits a boolean flag's variable without its value: it is read here, from the
  // process's environment, or from the run's when run() hands it (main.ts)
  return command.on(`optionEnv:${option.name()}`, (value?: string) => {
    const raw = value ?? process.env[variable] ?? "";
    const word = raw.trim().toLowerCase();
    if (!ON_WORDS.has(word) && !OFF_WORDS.has(word)) {
      command.error(
        `error: environment variable ${variable} must be true or false (1/0, yes/no, on/off); got '${raw}'`,
        {
          code: "commander.invalidArgument",
          exitCode: 2,
        },
      );
    }
    command.setOptionValueWithSource(option.attributeName(), ON_WORDS.has(word), "env");
  });
}

export interface StorageFlags {
  dataDir?: string;
  database?: string;
  secretKeyFile?: string;
}

export function resolveDataDir(options: { dataDir?: string }, env: Record<string, string | undefined>): string {
  return options.dataDir ?? defaultDataDir(env);
}

/** Where an instance keeps its state, from the storage flags and the environment. */
export function instanceOptions(options: StorageFlags, env: Record<string, string | undefined>) {
  const { secretKey, error } = resolveSecretKey(options.secretKeyFile, env);
  if (error) throw new UsageError(error);
  return { dataDir: resolveDataDir(options, env), databaseUrl: options.database, secretKey };
}
