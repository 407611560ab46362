import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { loadServerAdmin } from "../../cli/compose.js";
import { examples, withContext } from "../verb-helpers.js";
import { instanceOptions, type StorageFlags, storageOptions } from "./options.js";

interface Options extends StorageFlags {
  adminUser: string;
  adminEmail?: string;
}

async function recoverAdmin(ctx: Context, options: Options): Promise<void> {
  const { recoverAdminInstance } = await loadServerAdmin();
  const result = await recoverAdminInstance({
    ...instanceOptions(options, ctx.io.env),
    adminUser: options.adminUser,
    adminEmail: options.adminEmail,
  });
  ctx.info(
    result.created
      ? `Created admin '${result.userName}' in ${result.database}.`
      : `'${result.userName}' in ${result.database} is an active, unlocked admin again; its sessions were ended.`,
  );
  ctx.info("Its one-time password is shown once, below; it must be changed at the first login.");
  await ctx.print({
    userName: result.userName,
    id: result.id,
    created: result.created,
    oneTimePassword: result.oneTimePassword,
  });
}

export function register(group: Command, io: Context["io"]): void {
  storageOptions(group.command("recover-admin"))
    .description(
      "break-glass: make a user an active admin again with a one-time password (or create it); needs the database and the secret, not the API",
    )
    .option("--admin-user <name>", "the user to recover, or to create as an admin", "admin")
    .option("--admin-email <addr>", "e-mail address when the admin is created")
    .addHelpText(
      "after",
      examples(
        "bizctl server recover-admin --admin-user admin",
        "BIZCTL_SECRET_KEY_FILE=/etc/bizctl/secret bizctl server recover-admin --database postgres://bizctl@db/bizctl --admin-user <name>",
      ),
    )
    .action(withContext(io, recoverAdmin));
}
