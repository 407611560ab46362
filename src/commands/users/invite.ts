import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as invitations from "../../contract/invitations.js";
import { examples, withContext } from "../verb-helpers.js";
import { resolveUser } from "./resolve.js";

/** Mails the invitation and says where it went and until when it works. */
export async function sendInvitation(
  ctx: Context,
  user: { id: string; userName: string; invited?: unknown },
): Promise<void> {
  const { data } = await (await ctx.client()).call(invitations.sendInvitation, { params: { resourceId: user.id } });
  // `invited` (account state) says whether an earlier link was pending: only then did one stop working
  const older = user.invited === true ? " The link of the earlier invitation no longer works." : "";
  ctx.info(
    `Invitation for ${user.userName} queued to ${data.email}; its link sets the first password, works once, until ${data.expiresAt}.${older}`,
  );
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("invite <user>")
    .description(
      "mail (again) an invitation whose link sets the first password; voids the older one (admin, or support on ordinary users)",
    )
    .addHelpText("after", examples("bizctl users invite <user>", "bizctl users invite <e-mail>"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        await sendInvitation(ctx, await resolveUser(ctx, reference));
      }),
    );
}
