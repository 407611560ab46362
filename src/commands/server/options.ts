import { type Command, Option } from "commander";
import { defaultDataDir } from "../../config/paths.js";

/** `--data-dir` and `--database`, shared by every `server` verb, each with its environment variable. */
export function storageOptions(command: Command): Command {
  return command
    .addOption(new Option("--data-dir <dir>", "data directory (SQLite file, keys, outbox)").env("BIZCTL_DATA_DIR"))
    .addOption(
      new Option("--database <url>", "postgres://… or a SQLite file (default <data-dir>/bizctl.db)").env(
        "BIZCTL_DATABASE_URL",
      ),
    );
}

export function resolveDataDir(options: { dataDir?: string }, env: Record<string, string | undefined>): string {
  return options.dataDir ?? defaultDataDir(env);
}
