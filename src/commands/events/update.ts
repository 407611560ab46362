import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { merge, recordFromOptions } from "../../cli/record-input.js";
import * as events from "../../contract/events.js";
import { collect, examples, withContext } from "../verb-helpers.js";

/** Reads the event, applies the changes and writes it back with If-Match, so no concurrent change is lost. */
async function updateEvent(ctx: Context, code: string, options: { set?: string[]; file?: string }): Promise<void> {
  ctx.requireCredential();
  ctx.checkFieldsBeforeWrite();
  const changes = await recordFromOptions(ctx.io, options);
  if (Object.keys(changes).length === 0) throw new UsageError("Nothing to change.", "pass --set key=value or --file F");
  const client = await ctx.client();
  const current = await client.call(events.getEvent, { params: { code } });
  const record = merge(current.data as Record<string, unknown>, changes);
  for (const field of events.EVENT_READ_ONLY_FIELDS) delete record[field];
  const { data } = await client.call(events.updateEvent, {
    params: { code },
    body: record as never,
    ifMatch: current.etag,
  });
  ctx.info(`Updated event ${data.code} (version ${data.version}).`);
  await ctx.print(data);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("update <code>")
    .description("change fields of an event (read, merge, write back with If-Match)")
    .option("--set <key=value>", "a field to change (repeatable; dotted keys; JSON values; null clears)", collect)
    .option("--file <file>", "fields to change as JSON or YAML ('-' for stdin)")
    .addHelpText(
      "after",
      examples(
        "bizctl events update KICKOFF --set location='Room 4'",
        "bizctl events update KICKOFF --set endsAt=null",
      ),
    )
    .action(withContext(io, updateEvent));
}
