import type { Command } from "commander";
import type { Context } from "../../cli/context.js";
import * as events from "../../contract/events.js";
import { examples, withContext } from "../shared.js";

async function deleteEvent(ctx: Context, code: string): Promise<void> {
  ctx.requireCredential();
  const client = await ctx.client();
  const current = await client.call(events.getEvent, { params: { code } });
  await ctx.confirm(`Delete event ${current.data.code} (${current.data.name})?`);
  await client.call(events.deleteEvent, { params: { code }, ifMatch: current.etag });
  ctx.info(`Deleted event ${current.data.code}.`);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("delete <code>")
    .description("delete an event (asks first; --yes without a terminal)")
    .addHelpText("after", examples("bizctl events delete KICKOFF", "bizctl events delete KICKOFF --yes"))
    .action(withContext(io, deleteEvent));
}
