import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as sessions from "../../contract/sessions.js";
import { examples, withContext } from "../verb-helpers.js";
import { resolveUser } from "./resolve.js";

async function signOut(ctx: Context, reference: string, options: { session?: string }): Promise<void> {
  ctx.requireCredential();
  const user = await resolveUser(ctx, reference);
  const client = await ctx.client();
  if (options.session) {
    await client.call(sessions.endOneOfUser, { params: { resourceId: user.id, sessionId: options.session } });
    ctx.info(`Ended session ${options.session} of ${user.userName}; its token is refused from now on.`);
    return;
  }
  const { data } = await client.call(sessions.endAllOfUser, { params: { resourceId: user.id } });
  ctx.info(
    data.ended === 0
      ? `${user.userName} had no open session.`
      : `Ended ${data.ended} session${data.ended === 1 ? "" : "s"} of ${user.userName}; their tokens are refused from now on.`,
  );
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("sign-out <user>")
    .description("end a user's sessions, all or one (admin, or support on ordinary users)")
    .option("--session <id>", "end only this session (see 'users sessions')")
    .addHelpText(
      "after",
      examples("bizctl users sign-out <user>", "bizctl users sign-out <user> --session <session-id>"),
    )
    .action(withContext(io, signOut));
}
