import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError, withHint } from "../../cli/errors.js";
import { readNewPassword, requirePassword } from "../../cli/passwords.js";
import * as auth from "../../contract/auth.js";
import { examples, withContext } from "../verb-helpers.js";

/** `token`: the session of a login not kept yet (a scripted first login), else the profile's. */
export async function changeOwnPassword(
  ctx: Context,
  lastPassword: string,
  newPassword: string,
  token?: string,
): Promise<void> {
  const client = await ctx.client();
  const headers = token ? { authorization: `Bearer ${token}` } : undefined;
  await withHint(
    client.call(auth.changePassword, { body: { lastPassword, newPassword }, ...(headers && { headers }) }),
    "invalid_credentials",
    "type your current password again; forgotten, 'bizctl auth renew-password --user NAME' mails a reset link",
  );
  ctx.info("Password changed; your other sessions were ended.");
}

async function changePassword(ctx: Context, options: { passwordStdin?: boolean }): Promise<void> {
  ctx.requireCredential();
  const canPrompt = ctx.canPrompt();
  const current = await requirePassword(ctx.io, {
    stdin: options.passwordStdin,
    index: 0,
    prompt: "Current password",
    canPrompt,
  });
  const next = await readNewPassword(ctx.io, {
    stdin: options.passwordStdin,
    index: 1,
    prompt: "New password",
    canPrompt,
    userName: ctx.profile.auth?.user.userName,
  });
  if (!next)
    throw new UsageError("A new password is required.", "give it on the second line of stdin with --password-stdin");
  await changeOwnPassword(ctx, current, next);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("change-password")
    .description("change your password (POST /auth/ChangePassWithLastPass)")
    .option("--password-stdin", "read the current password, then the new one, one per line from stdin")
    .addHelpText(
      "after",
      examples(
        "bizctl auth change-password",
        'printf \'%s\\n%s\\n\' "$OLD" "$NEW" | bizctl auth change-password --password-stdin',
      ),
    )
    .action(withContext(io, changePassword));
}
