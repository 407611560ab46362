import { existsSync } from "node:fs";
import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { loadServerAdmin } from "../../cli/compose.js";
import { UsageError } from "../../cli/errors.js";
import { examples, withContext } from "../verb-helpers.js";
import { instanceOptions, type StorageFlags, storageOptions } from "./options.js";

const PG_DUMP_EXAMPLE = "pg_dump --format=custom --file=bizctl.dump postgres://bizctl@db/bizctl";

async function backup(ctx: Context, file: string, options: StorageFlags & { force?: boolean }): Promise<void> {
  const instance = instanceOptions(options, ctx.io.env);
  // refused before connecting: the answer does not depend on the server being there
  if (instance.databaseUrl && /^postgres(ql)?:\/\//i.test(instance.databaseUrl)) {
    throw new UsageError(
      "server backup copies SQLite databases only; back up PostgreSQL with pg_dump.",
      `e.g. ${PG_DUMP_EXAMPLE}`,
    );
  }
  if (!options.force && existsSync(file)) {
    throw cannotWrite(file, "EEXIST");
  }
  const { backupInstance } = await loadServerAdmin();
  let result: Awaited<ReturnType<typeof backupInstance>>;
  try {
    result = await backupInstance({ ...instance, file, force: options.force ?? false });
  } catch (error) {
    throw explained(error, file);
  }
  ctx.info(`Backed up ${result.database} to ${result.file} (${result.size} bytes, ${result.pages} pages).`);
  ctx.info(
    result.signingKeys === "database"
      ? "The signing keys in it are sealed under the deployment secret: keep BIZCTL_SECRET_KEY (or its file) backed up apart from it."
      : `The signing keys are not in it but files in ${result.keysDir}: back up that folder too.`,
  );
  await ctx.print(result);
}

const REASONS: Record<string, string> = {
  EEXIST: "it exists",
  ENOENT: "its directory does not exist",
  ENOTDIR: "its directory is not a directory",
  EACCES: "its directory is not writable by this user",
  EPERM: "its directory is not writable by this user",
  EROFS: "its directory is on a read-only file system",
};

function cannotWrite(file: string, code: string): UsageError {
  return new UsageError(
    `Cannot write ${file}: ${REASONS[code]}.`,
    code === "EEXIST" ? "choose another file, or pass --force to replace it" : "choose another place for it",
  );
}

/** The file system's refusals as one line that says what to change; anything else as it is. */
function explained(error: unknown, file: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  return code !== undefined && code in REASONS ? cannotWrite(file, code) : error;
}

export function register(group: Command, io: Context["io"]): void {
  storageOptions(group.command("backup"))
    .argument("<file>", "where to write the copy (a SQLite database file)")
    .description("copy the SQLite database to FILE while servers keep serving (PostgreSQL: use pg_dump)")
    .option("--force", "replace FILE if it exists")
    .addHelpText(
      "after",
      `${examples(
        "bizctl server backup /var/backups/bizctl-$(date +%F).db",
        "bizctl server backup --data-dir /var/lib/bizctl --force /var/backups/bizctl.db",
      )}
The copy is written to a temporary file beside FILE (mode 0600) and renamed when complete.
It holds the signing keys only when the deployment has a secret (BIZCTL_SECRET_KEY), sealed
under it: back the secret up apart. Without one they are files in <data-dir>/keys: back that
folder up too. On PostgreSQL use pg_dump, e.g.
  ${PG_DUMP_EXAMPLE}
`,
    )
    .action(withContext(io, backup));
}
