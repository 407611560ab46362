import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { CliError, EXIT } from "../../cli/errors.js";
import { caller, refuseBeforeAsking } from "../../cli/permissions.js";
import * as auth from "../../contract/auth.js";
import * as diagnosis from "../../contract/diagnosis.js";
import { allows } from "../../contract/policy/index.js";
import { examples, withContext } from "../verb-helpers.js";
import { resolveUser, rolesOf, type UserRecord } from "./resolve.js";

/** The address a link goes to, as the server picks it: the primary e-mail, else the first. */
function mailboxOf(user: UserRecord): string | undefined {
  const emails = ((user.emails ?? []) as { value?: string; primary?: boolean }[]).filter((e) => e.value);
  return (emails.find((e) => e.primary) ?? emails[0])?.value;
}

/**
 * What the caller may do for a user without an e-mail: an admin adds one or sets a temporary
 * password; support (here only for a user who holds neither admin nor support) asks an admin
 * to add one, or sets a temporary password.
 */
async function insteadOfMail(ctx: Context, user: UserRecord): Promise<string> {
  const update = `'bizctl users update ${user.userName} --set emails=...'`;
  const setPassword = `'bizctl users set-password ${user.userName}'`;
  const me = await caller(ctx);
  if (allows({ userId: me.id, roles: me.roles }, "users:update", { id: user.id, roles: rolesOf(user) }))
    return `add one (${update}), or give a temporary password (${setPassword})`;
  return `ask an admin to add one (${update}), or give a temporary password (${setPassword})`;
}

/**
 * The server mails no link that opens a privileged account to an address a person's token set
 * (contract/policy/addresses.ts), and answers 202 all the same: the diagnosis says so, for those
 * who may read it (staff signed in); a caller who may not goes on as before.
 */
async function refuseUnconfirmedAddress(ctx: Context, user: UserRecord): Promise<void> {
  const client = await ctx.client();
  const answer = await client.call(diagnosis.diagnoseUser, { params: { id: String(user.id) } }).catch(() => undefined);
  const reason = answer?.data.reasons.find((one) => one.code === "reset_address_unconfirmed");
  if (!reason) return;
  throw new CliError(
    `No reset link is mailed to ${user.userName}: ${reason.meaning}`,
    EXIT.conflict,
    "reset_address_unconfirmed",
    reason.fix?.command ? `${reason.fix.text}: ${reason.fix.command}` : reason.fix?.text,
  );
}

/**
 * The help desk's reset: the user's own reset link (POST /renewPassword, the flow of
 * `auth renew-password`), for a user named as support staff know it. The server's answer is the
 * same whether or not a mail leaves, so what would stop it is said here first.
 */
async function resetPassword(ctx: Context, reference: string): Promise<void> {
  ctx.requireCredential();
  const user = await resolveUser(ctx, reference);
  // A link that support sends may not open an account that holds admin or support (spec 1.1).
  // The server holds to it too (the request carries our credential: the audit trail names us,
  // and the link carries our role), but would answer 202 all the same: so it is said here.
  await refuseBeforeAsking(
    ctx,
    "users:send-reset-link",
    { id: user.id, roles: rolesOf(user) },
    { about: user.userName },
  );
  const email = mailboxOf(user);
  if (!email) {
    throw new CliError(
      `${user.userName} has no e-mail address, so no reset link can reach them.`,
      EXIT.validation,
      "no_email",
      await insteadOfMail(ctx, user),
    );
  }
  if (user.active === false) {
    throw new CliError(
      `${user.userName} is disabled; a reset link would not let them log in.`,
      EXIT.conflict,
      "user_disabled",
      `enable the account first ('bizctl users enable ${user.userName}')`,
    );
  }
  const client = await ctx.client();
  await refuseUnconfirmedAddress(ctx, user);
  await client.call(auth.renewPassword, { body: { userName: user.userName } });
  ctx.info(
    `Reset link for ${user.userName} queued to ${email}; it works once, and choosing a new password with it ends their sessions.`,
  );
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("reset-password <user>")
    .description("mail a user a link to choose a new password (as auth renew-password, by id, user name or e-mail)")
    .addHelpText("after", examples("bizctl users reset-password <user>", "bizctl users reset-password <e-mail>"))
    .action(withContext(io, resetPassword));
}
