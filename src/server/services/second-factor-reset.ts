import { escapeHtml } from "../escape-html.js";
import { ProblemError } from "../problem-error.js";
import { revokeUserSessions } from "../store/sessions-repo.js";
import { deleteTotpFactor } from "../store/totp-repo.js";
import { findAccountById } from "../store/users-repo.js";
import { actorOf, auditBy, refusalsRecorded, userTarget } from "./audit.js";
import { recipient } from "./link-mails.js";
import { assertCan } from "./resource-policy.js";
import type { Principal, ServiceContext } from "./service-context.js";

// Support's reset of a User's second factor (spec 1.7), for a user who lost the device: the
// factor and its recovery codes go, the user's sessions end, the user is told by mail, and the
// audit trail keeps who did it, to whom and why.

/**
 * DELETE /Resources/{id}/mfa. 404 when the User has no factor (active or pending), as the
 * user's own removal answers: there is nothing at that address to delete. The notice is queued
 * with the change, so neither commits without the other.
 */
export async function resetSecondFactor(ctx: ServiceContext, principal: Principal, userId: string, reason?: string) {
  const account = await findAccountById(ctx.store.db, userId);
  if (!account) throw new ProblemError("not_found", `No user with id ${userId}.`);
  const target = userTarget(account);
  const details = reason === undefined ? {} : { reason };
  return refusalsRecorded(
    ctx,
    (error) =>
      ["forbidden", "not_found"].includes(error.code)
        ? { action: "mfa.reset", actor: actorOf(principal), origin: principal.origin, target, details }
        : undefined,
    async () => {
      assertCan(principal, "resetSecondFactor", "User", { id: account.id, roles: account.roles });
      const now = ctx.clock();
      return ctx.mailer.transaction(async (trx, queue) => {
        // the delete decides between two resets racing: the second finds nothing and rolls back
        if ((await deleteTotpFactor(trx, account.id)) === 0) {
          throw new ProblemError("not_found", `${account.userName} has no second factor.`);
        }
        const sessionsEnded = await revokeUserSessions(trx, account.id, now);
        const to = await recipient(ctx, trx, account.id);
        if (to) {
          const text = `Hello ${to.userName},\n\nthe second factor (authenticator app) of your bizctl account was removed by ${principal.userName} at ${now.toISOString()}, with its recovery codes, and every session was ended. You log in with your password alone until you enroll a new one ('bizctl auth mfa enroll'). If you did not ask for this, tell your administrator at once.\n`;
          await queue.mail({
            to: to.email,
            subject: "The second factor of your bizctl account was removed",
            text,
            html: `<p>${escapeHtml(text).replace(/\n\n/g, "</p><p>")}</p>`,
          });
        }
        await auditBy(ctx, trx, principal, {
          action: "mfa.reset",
          target,
          details: { ...details, sessionsEnded, noticeQueued: to !== undefined },
        });
        return { sessionsEnded, noticeQueued: to !== undefined };
      });
    },
  );
}
