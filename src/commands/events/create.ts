import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import { promptText } from "../../cli/prompts.js";
import { fieldValidator, type Record_, recordFromOptions } from "../../cli/record-input.js";
import * as events from "../../contract/events.js";
import { collect, examples, tolerating, withContext } from "../verb-helpers.js";

const REQUIRED: [field: string, question: string][] = [
  ["name", "Name"],
  ["startsAt", "Starts at (RFC 3339, e.g. 2027-01-10T09:00:00Z)"],
];

/**
 * Asks for the required fields that are missing, on a terminal; elsewhere names the flag. Each
 * answer is checked against the contract's schema of that field before the next question.
 */
async function completeRecord(ctx: Context, record: Record_): Promise<Record_> {
  // nobody types a name and a date only to be refused: the roles first, when a question would come
  if (ctx.canPrompt() && REQUIRED.some(([field]) => record[field] === undefined)) {
    await refuseBeforeAsking(ctx, "events:write", {}, { verb: "create", about: "events" });
  }
  for (const [field, question] of REQUIRED) {
    if (record[field] !== undefined) continue;
    if (!ctx.canPrompt()) throw new UsageError(`The event needs '${field}'.`, `pass --set ${field}=...`);
    record[field] = await promptText(ctx.io, question, { validate: await fieldValidator(events.EventInput, field) });
  }
  return record;
}

async function createEvent(
  ctx: Context,
  options: { set?: string[]; file?: string; ifNotExists?: boolean },
): Promise<void> {
  ctx.requireCredential();
  ctx.checkFieldsBeforeWrite();
  const record = await completeRecord(ctx, await recordFromOptions(ctx.io, options));
  const client = await ctx.client();
  const data = await tolerating(
    "conflict",
    options.ifNotExists && typeof record.code === "string",
    async () => {
      const created = (await client.call(events.createEvent, { body: record as never })).data;
      ctx.info(`Created event ${created.code}.`);
      return created;
    },
    async () => {
      const existing = (await client.call(events.getEvent, { params: { code: String(record.code) } })).data;
      ctx.info(`Event ${existing.code} already exists; left as it is.`);
      return existing;
    },
  );
  await ctx.print(data);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("create")
    .description("register a new event")
    .option("--set <key=value>", "a field (repeatable; dotted keys; JSON values allowed)", collect)
    .option("--file <file>", "the event as JSON or YAML ('-' for stdin)")
    .option("--if-not-exists", "an event with this code already there is success: it is printed, unchanged")
    .addHelpText(
      "after",
      examples(
        'bizctl events create --set code=OFFSITE --set name="Off-site" --set startsAt=2027-03-01T09:00:00Z',
        "bizctl events create --file event.yaml",
        "bizctl events create --file - < event.json",
      ),
    )
    .action(withContext(io, createEvent));
}
