import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as auth from "../../contract/auth.js";
import { examples, withContext } from "../verb-helpers.js";
import { resolveUser, type UserRecord } from "./resolve.js";

/** What unlocking changed, in the words of a help desk. */
function unlockedMessage(user: UserRecord): string {
  if (user.locked) {
    return `Unlocked ${user.userName}: it was locked until ${String(user.lockedUntil)} after ${String(user.failedLogins)} failed logins.`;
  }
  const failed = Number(user.failedLogins ?? 0);
  if (failed === 0) return `${user.userName} was not locked and had no failed logins: nothing to undo.`;
  return `${user.userName} was not locked; ${failed === 1 ? "its failed login is" : `its ${failed} failed logins are`} forgotten.`;
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("unlock <user>")
    .description("clear the failed-login back-off of a user (admin, or support on ordinary users)")
    .addHelpText("after", examples("bizctl users unlock <user>", "bizctl users unlock <e-mail>"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        const user = await resolveUser(ctx, reference);
        await (await ctx.client()).call(auth.unlock, { params: { employeeId: user.id } });
        ctx.info(unlockedMessage(user));
      }),
    );
}
