import type { Context } from "../../cli/command-context.js";
import { ApiError } from "../../client/errors.js";
import * as audit from "../../contract/audit.js";

/** What `users get` shows of a user's recent activity (a table under the user). */
const ACTIVITY_COLUMNS = ["time", "action", "outcome", "actor.userName", "clientIp"];

/**
 * The last few records where the user is the actor or the target, as a rendered table (to be
 * written as it is: made safe again, its bold header would show as `^[[1m`); nothing when
 * the caller may not read them (the trail is best-effort extra here, not the command's result).
 */
export async function recentActivity(ctx: Context, userId: string, count = 5): Promise<string> {
  let records: unknown[];
  try {
    const filter = `actor.id eq ${JSON.stringify(userId)} or target.id eq ${JSON.stringify(userId)}`;
    const client = await ctx.client();
    records = (await client.call(audit.listAudit, { query: { filter, pagesize: count } })).data.data;
  } catch (error) {
    if (error instanceof ApiError) return "";
    throw error;
  }
  if (records.length === 0) return "\nRecent activity: none recorded.\n";
  // rendered as every table is: its cells already safe, its header bold where colour is on
  return `\nRecent activity:\n${await ctx.render(records, { format: "table", columns: ACTIVITY_COLUMNS })}`;
}
