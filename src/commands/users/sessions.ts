import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as sessions from "../../contract/sessions.js";
import { SESSION_COLUMNS } from "../session-columns.js";
import { examples, withContext } from "../verb-helpers.js";
import { resolveUser } from "./resolve.js";

async function listSessions(ctx: Context, reference: string): Promise<void> {
  ctx.requireCredential();
  const user = await resolveUser(ctx, reference);
  const { data } = await (await ctx.client()).call(sessions.listOfUser, { params: { resourceId: user.id } });
  if (data.sessions.length === 0) ctx.info(`${user.userName} has no open session.`);
  await ctx.print(data.sessions, SESSION_COLUMNS);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("sessions <user>")
    .description("a user's open sessions: created, last used (to the minute), expires, client IP, user agent")
    .addHelpText("after", examples("bizctl users sessions admin", "bizctl users sessions <e-mail> --json"))
    .action(withContext(io, listSessions));
}
