import type { Command } from "commander";
import type { Context } from "../../../cli/command-context.js";
import * as oauth from "../../../contract/oauth.js";
import { examples, withContext } from "../../verb-helpers.js";

const COLUMNS = ["token", "userName", "consumerName", "consumerKey", "createdAt", "lastUsedAt", "expiresAt"];

export function register(group: Command, io: Context["io"]): void {
  group
    .command("list")
    .description("the applications acting for you (your live OAuth grants); an admin sees every user's")
    .option("--user <id>", "only this user's grants (a User resource id; another user's: admin only)")
    .addHelpText(
      "after",
      examples(
        "bizctl oauth tokens list",
        "bizctl oauth tokens list --json",
        "bizctl oauth tokens list --user <user-id>",
      ),
    )
    .action(
      withContext(io, async (ctx, options: { user?: string }) => {
        ctx.requireCredential();
        const { data } = await (await ctx.client()).call(oauth.listTokens, { query: { userId: options.user } });
        await ctx.printList(data.data, COLUMNS, "live tokens");
      }),
    );
}
