import type { Command } from "commander";
import type { Context } from "../../../cli/command-context.js";
import * as oauth from "../../../contract/oauth.js";
import { examples, withContext } from "../../verb-helpers.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("revoke <token>")
    .description("revoke an OAuth grant: your own, or anyone's (admin); asks first, --yes without a terminal")
    .addHelpText("after", examples("bizctl oauth tokens revoke <token> --yes"))
    .action(
      withContext(io, async (ctx, token: string) => {
        ctx.requireCredential();
        await ctx.confirm(`Revoke OAuth token ${token}?`);
        await (await ctx.client()).call(oauth.revokeToken, { params: { token } });
        ctx.info(`Revoked OAuth token ${token}.`);
      }),
    );
}
