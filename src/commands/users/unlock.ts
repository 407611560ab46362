import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as auth from "../../contract/auth.js";
import { examples, withContext } from "../verb-helpers.js";
import { resolveUser } from "./resolve.js";

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
        ctx.info(
          user.locked
            ? `Unlocked ${user.userName}: it was locked until ${String(user.lockedUntil)} after ${String(user.failedLogins)} failed logins.`
            : `${user.userName} was not locked; its count of failed logins (${String(user.failedLogins ?? 0)}) is back to 0.`,
        );
      }),
    );
}
