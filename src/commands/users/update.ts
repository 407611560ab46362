import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { merge, recordFromOptions } from "../../cli/record-input.js";
import { updateResource } from "../resource-calls.js";
import { collect, examples, withContext } from "../verb-helpers.js";
import { resolveUser } from "./resolve.js";
import { printUser } from "./summary.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("update <user>")
    .description("change a user's attributes (read, merge, write back with If-Match)")
    .option("--set <key=value>", "an attribute to change (repeatable; dotted keys; JSON values; null clears)", collect)
    .option("--file <file>", "attributes to change as JSON or YAML ('-' for stdin)")
    .addHelpText(
      "after",
      examples("bizctl users update admin --set title=CTO", "bizctl users update <user> --set department=Sales"),
    )
    .action(
      withContext(io, async (ctx, reference: string, options: { set?: string[]; file?: string }) => {
        ctx.requireCredential();
        const changes = await recordFromOptions(ctx.io, options);
        if (Object.keys(changes).length === 0) {
          throw new UsageError("Nothing to change.", "pass --set key=value or --file F");
        }
        const { id } = await resolveUser(ctx, reference);
        const user = await updateResource(ctx, id, (current) => merge(current, changes));
        ctx.info(`Updated ${String(user.userName)}.`);
        await printUser(ctx, user);
      }),
    );
}
