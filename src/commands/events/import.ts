import type { Command } from "commander";
import type { Context } from "../../cli/context.js";
import { CliError, describeError, EXIT, exitCodeFor } from "../../cli/errors.js";
import { Progress } from "../../cli/progress.js";
import { readRecordsFile } from "../../cli/record-input.js";
import * as events from "../../contract/events.js";
import { examples, withContext } from "../shared.js";

interface Outcome {
  item: number;
  code?: string;
  status: "created" | "failed";
  error?: string;
}

/**
 * Creates each event of a file (as `events export` writes them). Read-only fields are ignored;
 * an event that fails (a duplicate code, an invalid field) is reported and the rest go on.
 */
async function importEvents(ctx: Context, file: string): Promise<void> {
  ctx.requireCredential();
  const records = await readRecordsFile(ctx.io, file);
  const client = await ctx.client();
  const progress = new Progress(ctx, "events");
  const outcomes: Outcome[] = [];
  let firstFailure: unknown;
  for (const [index, record] of records.entries()) {
    try {
      const { data } = await client.call(events.createEvent, { body: record as never });
      outcomes.push({ item: index + 1, code: data.code, status: "created" });
    } catch (error) {
      firstFailure ??= error;
      outcomes.push({
        item: index + 1,
        code: record.code as string | undefined,
        status: "failed",
        error: describeError(error).message,
      });
    }
    progress.update(index + 1, records.length);
  }
  progress.done();
  const failed = outcomes.filter((o) => o.status === "failed").length;
  ctx.info(`Imported ${outcomes.length - failed} of ${outcomes.length} event(s)${failed ? `; ${failed} failed` : ""}.`);
  await ctx.print(outcomes, ["item", "code", "status", "error"]);
  if (firstFailure) {
    throw new CliError(
      `${failed} of ${outcomes.length} event(s) were not imported; see the report above.`,
      exitCodeFor(firstFailure) || EXIT.failure,
      "import_incomplete",
    );
  }
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("import <file>")
    .description("create the events of a JSON or YAML array, or NDJSON ('-' for stdin); reports each")
    .addHelpText(
      "after",
      examples(
        "bizctl events import events.json",
        "bizctl --profile prod events export | bizctl --profile staging events import -",
      ),
    )
    .action(withContext(io, importEvents));
}
