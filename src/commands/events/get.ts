import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { fieldsToFetch } from "../../cli/fields.js";
import * as events from "../../contract/events.js";
import { examples, withContext } from "../verb-helpers.js";

async function getEvent(ctx: Context, code: string): Promise<void> {
  ctx.requireCredential();
  const { data } = await (await ctx.client()).call(events.getEvent, {
    params: { code },
    query: { fields: fieldsToFetch(ctx.globals.fields) },
  });
  await ctx.print(data);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("get <code>")
    .description("show one event")
    .addHelpText(
      "after",
      examples("bizctl events get KICKOFF", "bizctl events get KICKOFF --fields code,name,startsAt"),
    )
    .action(withContext(io, getEvent));
}
