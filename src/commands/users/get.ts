import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { examples, withContext } from "../verb-helpers.js";
import { recentActivity } from "./recent-activity.js";
import { resolveUser } from "./resolve.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("get <user>")
    .description("one user, by id, user name or e-mail")
    .addHelpText("after", examples("bizctl users get admin", "bizctl users get <e-mail> --json"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        const user = await resolveUser(ctx, reference);
        await ctx.print(user);
        // a person at a table gets the user's recent activity under it; data formats stay the user alone
        if (ctx.format() === "table" && ctx.globals.query === undefined && ctx.fields() === undefined) {
          ctx.io.stdout.write(await recentActivity(ctx, String(user.id)));
        }
      }),
    );
}
