import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { loadServerAdmin } from "../../cli/compose.js";
import { UsageError } from "../../cli/errors.js";
import { stdinLine } from "../../cli/io.js";
import { examples, withContext } from "../verb-helpers.js";
import { instanceOptions, type StorageFlags, storageOptions } from "./options.js";

interface Options extends StorageFlags {
  adminUser: string;
  adminEmail?: string;
  passwordStdin?: boolean;
}

async function init(ctx: Context, options: Options): Promise<void> {
  const password = options.passwordStdin ? await stdinLine(ctx.io, 0) : undefined;
  if (options.passwordStdin && !password) throw new UsageError("--password-stdin was given but stdin is empty.");
  const { initInstance } = await loadServerAdmin();
  const result = await initInstance({
    ...instanceOptions(options, ctx.io.env),
    adminUser: options.adminUser,
    adminEmail: options.adminEmail,
    password,
  });
  ctx.info(`Initialised ${result.database}; first admin '${result.userName}' created.`);
  if (result.oneTimePassword) {
    ctx.info("Its one-time password is shown once, below; it must be changed at the first login.");
  }
  await ctx.print({
    userName: result.userName,
    id: result.id,
    dataDir: result.dataDir,
    ...(result.oneTimePassword && { oneTimePassword: result.oneTimePassword }),
  });
}

export function register(group: Command, io: Context["io"]): void {
  storageOptions(group.command("init"))
    .description("create the data dir, the signing keys and the first admin")
    .option("--admin-user <name>", "user name of the first admin", "admin")
    .option("--admin-email <addr>", "e-mail address of the first admin")
    .option("--password-stdin", "read the admin's password from stdin (otherwise a one-time password is printed)")
    .addHelpText(
      "after",
      examples(
        "bizctl server init --admin-user admin",
        "bizctl server init --data-dir /var/lib/bizctl --admin-email it@example.com",
      ),
    )
    .action(withContext(io, init));
}
