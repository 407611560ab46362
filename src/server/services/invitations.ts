import { mayMailLinkTo, UNCONFIRMED_ADDRESS } from "../../contract/policy/index.js";
import { formatTimestamp } from "../http/timestamps.js";
import { ProblemError } from "../problem-error.js";
import { voidInvitations } from "../store/reset-tokens-repo.js";
import { findAccountById } from "../store/users-repo.js";
import { auditBy } from "./audit.js";
import { issuerRoleOf } from "./issued-credentials.js";
import { noRecipientReason, queueLinkMail, recipient } from "./link-mails.js";
import { assertCan } from "./resource-policy.js";
import { serviceAccountRefusal } from "./service-account-rules.js";
import type { Principal, ServiceContext } from "./service-context.js";

/**
 * POST /Resources/{id}/invitation: a single-use link that sets the first password through the
 * reset page, queued with its mail in one transaction (its token is made as the mail is sent), so
 * there is no link that is never sent and no mail with a dead link. A new invitation voids the older ones.
 */
export async function sendInvitation(ctx: ServiceContext, principal: Principal, userId: string) {
  const account = await findAccountById(ctx.store.db, userId);
  if (!account) throw new ProblemError("not_found", `No user with id ${userId}.`);
  assertCan(principal, "invite", "User", { id: account.id, roles: account.roles });
  if (account.serviceAccount) throw serviceAccountRefusal(account.userName, "be invited");
  if (!mayMailLinkTo({ roles: account.roles, addressesByDelegate: account.credential.addressesByDelegate })) {
    throw new ProblemError("conflict", `No invitation is sent to ${account.userName}: ${UNCONFIRMED_ADDRESS}.`);
  }
  if (account.credential.passwordHash && !account.credential.firstLogin) {
    throw new ProblemError(
      "conflict",
      `${account.userName} has already chosen a password; an invitation is for a first one. To change it, send them a password reset link instead.`,
    );
  }
  const now = ctx.clock();
  // whole seconds, so that the time told is never later than the link's real end
  const expiresAt = new Date(Math.floor(now.getTime() / 1000) * 1000 + ctx.inviteTtlSeconds * 1000);
  let email = "";
  await ctx.mailer.transaction(async (trx, queue) => {
    const to = await recipient(ctx, trx, account.id);
    if (!to) {
      throw new ProblemError(
        "conflict",
        `${account.userName} cannot be invited: ${await noRecipientReason(trx, account.id)}. An invitation needs an enabled account with an e-mail address.`,
      );
    }
    email = to.email;
    await voidInvitations(trx, account.id, now);
    await queueLinkMail(trx, queue.link, {
      purpose: "invitation",
      account,
      email: to.email,
      now,
      expiresAt,
      issuerRole: issuerRoleOf(principal),
    });
    await auditBy(ctx, trx, principal, {
      action: "user.invite",
      target: { type: "User", id: account.id, name: account.userName },
      details: { expiresAt: expiresAt.toISOString() },
    });
  });
  return { status: "queued" as const, email, expiresAt: formatTimestamp(expiresAt) };
}
