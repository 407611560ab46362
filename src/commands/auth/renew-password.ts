import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import * as auth from "../../contract/auth.js";
import { examples, withContext } from "../verb-helpers.js";

async function renewPassword(ctx: Context, options: { user?: string; email?: string }): Promise<void> {
  if (Boolean(options.user) === Boolean(options.email)) throw new UsageError("Give exactly one of --user or --email.");
  const body = options.user ? { userName: options.user } : { email: options.email as string };
  const { data } = await (await ctx.client()).call(auth.renewPassword, { body });
  ctx.info(data.detail);
  if (!ctx.io.stdout.isTTY || ctx.globals.json || ctx.globals.output) await ctx.print(data);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("renew-password")
    .description("e-mail a password reset link (the answer never tells whether the account exists)")
    .option("-u, --user <name>", "the user name")
    .option("--email <addr>", "the e-mail address")
    .addHelpText(
      "after",
      examples("bizctl auth renew-password --user jdoe", "bizctl auth renew-password --email jdoe@example.com"),
    )
    .action(withContext(io, renewPassword));
}
