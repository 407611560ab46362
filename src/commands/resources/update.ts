import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { merge, recordFromOptions } from "../../cli/record-input.js";
import { updateResource } from "../resource-calls.js";
import { collect, examples, withContext } from "../verb-helpers.js";

async function update(ctx: Context, id: string, options: { set?: string[]; file?: string }): Promise<void> {
  ctx.requireCredential();
  const changes = await recordFromOptions(ctx.io, options);
  if (Object.keys(changes).length === 0) throw new UsageError("Nothing to change.", "pass --set key=value or --file F");
  const data = await updateResource(ctx, id, (current) => merge(current, changes));
  ctx.info(`Updated ${String(data.resourceType)} ${data.id}.`);
  await ctx.print(data);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("update <id>")
    .description("change attributes (read, merge, write back with If-Match)")
    .option("--set <key=value>", "an attribute to change (repeatable; dotted keys; JSON values; null clears)", collect)
    .option("--file <file>", "attributes to change as JSON or YAML ('-' for stdin)")
    .addHelpText("after", examples("bizctl resources update <id> --set capacity=14"))
    .action(withContext(io, update));
}
