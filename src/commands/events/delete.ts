import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as events from "../../contract/events.js";
import { examples, tolerating, withContext } from "../verb-helpers.js";

async function deleteEvents(ctx: Context, codes: string[], options: { ignoreNotFound?: boolean }): Promise<void> {
  ctx.requireCredential();
  const client = await ctx.client();
  // every code is looked up before anything is deleted: an unknown one stops the whole command
  const found = [];
  for (const code of codes) {
    const current = await tolerating(
      "not_found",
      options.ignoreNotFound,
      () => client.call(events.getEvent, { params: { code } }),
      async () => {
        ctx.info(`No event ${code}; nothing to delete.`);
        return undefined;
      },
    );
    if (current) found.push(current);
  }
  if (found.length === 0) return;
  await ctx.confirm(`Delete ${found.map((e) => `event ${e.data.code} (${e.data.name})`).join(", ")}?`);
  for (const current of found) {
    await tolerating(
      "not_found",
      options.ignoreNotFound,
      () => client.call(events.deleteEvent, { params: { code: current.data.code }, ifMatch: current.etag }),
      async () => undefined,
    );
    ctx.info(`Deleted event ${current.data.code}.`);
  }
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("delete <codes...>")
    .description("delete events (asks first; --yes without a terminal)")
    .option("--ignore-not-found", "an event already gone is success")
    .addHelpText(
      "after",
      examples("bizctl events delete KICKOFF", "bizctl events delete KICKOFF <code> --yes --ignore-not-found"),
    )
    .action(withContext(io, deleteEvents));
}
