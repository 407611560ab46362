import type { Command } from "commander";
import type { Context } from "../../../cli/context.js";
import * as oauth from "../../../contract/oauth.js";
import { examples, withContext } from "../../shared.js";

const COLUMNS = ["token", "userName", "consumerName", "consumerKey", "createdAt", "expiresAt"];

export function register(group: Command, io: Context["io"]): void {
  group
    .command("list")
    .description("list live token credentials, of every user or of one (admin)")
    .option("--user <id>", "only this user's tokens (a User resource id)")
    .addHelpText("after", examples("bizctl oauth tokens list", "bizctl oauth tokens list --user <user-id> --json"))
    .action(
      withContext(io, async (ctx, options: { user?: string }) => {
        ctx.requireCredential();
        const { data } = await (await ctx.client()).call(oauth.listTokens, { query: { userId: options.user } });
        await ctx.printList(data.data, COLUMNS, "live tokens");
      }),
    );
}
