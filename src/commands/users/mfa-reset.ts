import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import * as mfa from "../../contract/mfa.js";
import { examples, withContext } from "../verb-helpers.js";
import { resolveUser, rolesOf } from "./resolve.js";

async function mfaReset(ctx: Context, reference: string, options: { reason?: string }): Promise<void> {
  ctx.requireCredential();
  const user = await resolveUser(ctx, reference);
  if (!ctx.globals.yes) {
    const target = { id: user.id, roles: rolesOf(user) };
    await refuseBeforeAsking(ctx, "users:mfa-reset", target, { about: user.userName });
  }
  await ctx.confirm(
    `Remove the second factor of ${user.userName} (${user.id}) and its recovery codes, and end its sessions?`,
  );
  const { data } = await (await ctx.client()).call(mfa.resetUserTotp, {
    params: { resourceId: user.id },
    ...(options.reason !== undefined && { query: { reason: options.reason } }),
  });
  const sessions = `${data.sessionsEnded} session${data.sessionsEnded === 1 ? "" : "s"} ended`;
  ctx.info(
    `Removed the second factor of ${user.userName}; ${sessions}; ${data.noticeQueued ? "a notice was mailed to the user" : "no notice was mailed (no e-mail address)"}. It logs in with its password alone until it enrolls again.`,
  );
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("mfa-reset <user>")
    .description(
      "remove a user's second factor (a lost device), end its sessions and mail it a notice; asks first (admin, or support on ordinary users)",
    )
    .option("--reason <text>", "why, kept in the audit trail")
    .addHelpText("after", examples("bizctl users mfa-reset <enrolled-user> --reason 'lost phone, ticket 4711' --yes"))
    .action(withContext(io, mfaReset));
}
