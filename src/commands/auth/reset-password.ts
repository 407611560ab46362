import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { emptyStdin, readNewPassword } from "../../cli/passwords.js";
import * as auth from "../../contract/auth.js";
import { examples, withContext } from "../verb-helpers.js";

async function resetPassword(ctx: Context, options: { token: string; passwordStdin?: boolean }): Promise<void> {
  const newPassword = await readNewPassword(ctx.io, {
    stdin: options.passwordStdin,
    index: 0,
    prompt: "New password",
    canPrompt: ctx.canPrompt(),
  });
  if (!newPassword && options.passwordStdin) throw emptyStdin("the new password", 0);
  if (!newPassword)
    throw new UsageError("A new password is required.", "type it at the prompt or pass it with --password-stdin");
  await (await ctx.client()).call(auth.resetPassword, { body: { token: options.token, newPassword } });
  ctx.info("Password changed; every session of the account was ended. Log in with the new password.");
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("reset-password")
    .description("set a new password with the token of a reset link")
    .requiredOption("--token <token>", "the token of the e-mailed link (the part after ?token=)")
    .option("--password-stdin", "read the new password from stdin")
    .addHelpText(
      "after",
      examples(
        "bizctl auth reset-password --token <token>",
        'printf \'%s\\n\' "$NEW" | bizctl auth reset-password --token "$TOKEN" --password-stdin',
      ),
    )
    .action(withContext(io, resetPassword));
}
