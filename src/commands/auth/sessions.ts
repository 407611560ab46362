import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as sessions from "../../contract/sessions.js";
import { SESSION_COLUMNS } from "../session-columns.js";
import { examples, withContext } from "../verb-helpers.js";

async function listSessions(ctx: Context): Promise<void> {
  ctx.requireCredential();
  const { data } = await (await ctx.client()).call(sessions.listOwn);
  await ctx.print(data.sessions, ["current", ...SESSION_COLUMNS]);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("sessions")
    .description("your open sessions; 'current' marks the one this command used")
    .addHelpText("after", examples("bizctl auth sessions", "bizctl auth sessions --json"))
    .action(withContext(io, listSessions));
}
