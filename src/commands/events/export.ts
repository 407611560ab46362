import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { printPages } from "../../cli/stream-output.js";
import { EVENT_FIELDS } from "../../contract/events.js";
import { examples, withContext } from "../verb-helpers.js";
import { eventPages } from "./list.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("export")
    .description("every event, all fields, in the output format (JSON when piped; -o ndjson|csv|yaml)")
    .option("--order <fields>", "comma-separated fields, '-' for descending (default startsAt,code)")
    .option("--filter <expr>", "filter expression")
    .option("--after <cursor>", "go on after this cursor (printed by an interrupted export)")
    .addHelpText(
      "after",
      examples(
        "bizctl events export > events.json",
        "bizctl events export -o ndjson --filter 'type eq \"webinar\"' > webinars.ndjson",
      ),
    )
    .action(
      withContext(io, async (ctx, options: { order?: string; filter?: string; after?: string }) => {
        const pages = eventPages(ctx, { ...options, all: true, resumeAs: "events export" });
        const count = await printPages(ctx, pages, {
          csvColumns: [...EVENT_FIELDS],
        });
        ctx.info(`Exported ${count} event(s).`);
      }),
    );
}
