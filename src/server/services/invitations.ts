import { formatTimestamp } from "../http/timestamps.js";
import { ProblemError } from "../problems.js";
import { saveResetToken, voidInvitations } from "../store/reset-tokens-repo.js";
import { findAccountById } from "../store/users-repo.js";
import { auditBy } from "./audit.js";
import type { Principal, ServiceContext } from "./context.js";
import { accountStamp, issuerRoleOf } from "./issued-credentials.js";
import { randomToken } from "./random-token.js";
import { escapeHtml, hashToken, recipient } from "./recovery.js";
import { assertCan } from "./resource-policy.js";

function duration(seconds: number): string {
  if (seconds >= 7200) return `${Math.round(seconds / 3600)} hours`;
  if (seconds >= 120) return `${Math.round(seconds / 60)} minutes`;
  return `${seconds} seconds`;
}

function invitationMail(userName: string, link: string, ttlSeconds: number) {
  const within = duration(ttlSeconds);
  const lines = [
    `Hello ${userName},`,
    `you are invited to bizctl. An account was opened for you with the user name ${userName}.`,
    `Open this link within ${within} to set your password:`,
    link,
    "The link works once, and only the latest invitation's link works. Once your password is set, log in with your user name and that password. If the link has expired, ask your administrator to send the invitation again.",
  ];
  return {
    subject: "You are invited to bizctl: set your password",
    text: `${lines.join("\n\n")}\n`,
    html: lines
      .map((line) =>
        line === link ? `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>` : `<p>${escapeHtml(line)}</p>`,
      )
      .join(""),
  };
}

/**
 * POST /Resources/{id}/invitation: a single-use link that sets the first password through the
 * reset page, mailed through the queue in the same transaction as its token, so there is no link
 * that is never sent and no mail with a dead link. A new invitation voids the older ones.
 */
export async function sendInvitation(ctx: ServiceContext, principal: Principal, userId: string) {
  const account = await findAccountById(ctx.store.db, userId);
  if (!account) throw new ProblemError("not_found", `No user with id ${userId}.`);
  assertCan(principal, "invite", "User", { id: account.id, roles: account.roles });
  if (account.credential.passwordHash && !account.credential.firstLogin) {
    throw new ProblemError(
      "conflict",
      `${account.userName} has already chosen a password; an invitation is for a first one. A reset link (renewPassword) changes it.`,
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
        `${account.userName} is disabled or has no e-mail address; an invitation needs both an active account and an address.`,
      );
    }
    email = to.email;
    const token = randomToken(32);
    await voidInvitations(trx, account.id, now);
    await saveResetToken(trx, {
      tokenHash: hashToken(token),
      userId: account.id,
      createdAt: now,
      expiresAt,
      purpose: "invitation",
      issuerRole: issuerRoleOf(principal),
      accountStamp: accountStamp(account),
    });
    const link = `${ctx.linkBase()}/resetPassword?token=${token}&invitation=1`;
    await queue({ to: to.email, ...invitationMail(to.userName, link, ctx.inviteTtlSeconds) });
    await auditBy(ctx, trx, principal, {
      action: "user.invite",
      target: { type: "User", id: account.id, name: account.userName },
      details: { expiresAt: expiresAt.toISOString() },
    });
  });
  return { status: "queued" as const, email, expiresAt: formatTimestamp(expiresAt) };
}
