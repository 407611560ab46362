import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { examples, withContext } from "../verb-helpers.js";
import { recentActivity } from "./recent-activity.js";
import { resolveUser } from "./resolve.js";
import { forPerson, userSummary } from "./summary.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("get <user>")
    .description("one user, by id, user name or e-mail")
    .addHelpText("after", examples("bizctl users get admin", "bizctl users get <e-mail> --json"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        const user = await resolveUser(ctx, reference);
        // a person at a table gets a summary and the user's recent activity under it; data
        // formats, --fields and --query stay the user alone, as the API answers it
        const person = forPerson(ctx);
        await ctx.print(person ? userSummary(user) : user);
        // written as it is: printText would show the table's bold headers as escape codes
        if (person) ctx.io.stdout.write(await recentActivity(ctx, String(user.id)));
      }),
    );
}
