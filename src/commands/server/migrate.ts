import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { loadServerAdmin } from "../../cli/compose.js";
import { examples, withContext } from "../verb-helpers.js";
import { instanceOptions, type StorageFlags, storageOptions } from "./options.js";

async function migrate(ctx: Context, options: StorageFlags): Promise<void> {
  const { migrateInstance } = await loadServerAdmin();
  const result = await migrateInstance(instanceOptions(options, ctx.io.env));
  ctx.info(
    result.applied.length
      ? `Applied ${result.applied.join(", ")} to ${result.database}.`
      : `${result.database} is up to date.`,
  );
  await ctx.print(result);
}

export function register(group: Command, io: Context["io"]): void {
  storageOptions(group.command("migrate"))
    .description("apply pending schema migrations (start does it too)")
    .addHelpText(
      "after",
      examples("bizctl server migrate", "bizctl server migrate --database postgres://bizctl@db/bizctl"),
    )
    .action(withContext(io, migrate));
}
