import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import * as sessions from "../../contract/sessions.js";
import { examples, withContext } from "../verb-helpers.js";

async function signOut(ctx: Context, options: { others?: boolean; session?: string }): Promise<void> {
  if (Boolean(options.others) === Boolean(options.session)) {
    throw new UsageError("Say which sessions to end.", "pass --others, or --session ID (see 'bizctl auth sessions')");
  }
  ctx.requireCredential();
  const client = await ctx.client();
  if (options.others) {
    const { data } = await client.call(sessions.endOwnOthers);
    ctx.info(
      data.ended === 0
        ? "No other session was open."
        : `Ended ${data.ended} other session${data.ended === 1 ? "" : "s"}; this one stays.`,
    );
    return;
  }
  const session = options.session as string;
  // ending this very session is a logout, and only 'auth logout' also forgets the stored token
  const { data } = await client.call(sessions.listOwn);
  if (data.sessions.some((s) => s.id === session && s.current)) {
    throw new UsageError("That is the session this command runs in.", "use 'bizctl auth logout' to end it");
  }
  await client.call(sessions.endOwn, { params: { sessionId: session } });
  ctx.info(`Ended session ${session}; its token is refused from now on.`);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("sign-out")
    .description("end your other sessions (--others) or one of them (--session ID)")
    .option("--others", "end every session but this one")
    .option("--session <id>", "end this session (see 'auth sessions')")
    .addHelpText("after", examples("bizctl auth sign-out --others", "bizctl auth sign-out --session <session-id>"))
    .action(withContext(io, signOut));
}
