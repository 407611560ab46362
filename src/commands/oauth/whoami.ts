import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { examples, withContext } from "../verb-helpers.js";
import { identity } from "./exchanges.js";
import { storedOAuth, storedSigning } from "./signing.js";

async function whoami(ctx: Context): Promise<void> {
  const stored = storedOAuth(ctx);
  const who = await identity(ctx, {
    consumer: { key: stored.consumerKey, secret: stored.consumerSecret },
    token: { key: stored.token, secret: stored.tokenSecret },
    ...(await storedSigning(stored, {})),
  });
  await ctx.print({
    user: who.user.userName,
    userId: who.user.id,
    roles: who.user.roles,
    consumerKey: who.consumerKey,
    token: stored.token,
    obtainedAt: stored.obtainedAt,
  });
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("whoami")
    .description("the signed identity call: who the stored token credentials act as")
    .addHelpText("after", examples("bizctl oauth whoami", "bizctl oauth whoami --json"))
    .action(withContext(io, whoami));
}
