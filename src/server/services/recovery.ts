import type { Kysely } from "kysely";
import { isPrivileged, mayMailLinkTo, UNCONFIRMED_ADDRESS } from "../../contract/policy/index.js";
import { escapeHtml } from "../escape-html.js";
import type { Queues } from "../mail/types.js";
import { invalid, ProblemError } from "../problem-error.js";
import { revokeUserApiTokens } from "../store/api-tokens-repo.js";
import { consumeResetToken, userIdsByEmail } from "../store/reset-tokens-repo.js";
import type { Schema } from "../store/schema.js";
import { revokeUserSessions } from "../store/sessions-repo.js";
import { findAccountById, findAccountByUserName, saveCredential } from "../store/users-repo.js";
import { forgetNameFailures } from "./accounts.js";
import { type AuditActor, actorOf, audit } from "./audit.js";
import { accountStamp, type IssuerRole, issuerRoleOf, issuerStillMay } from "./issued-credentials.js";
import { hashToken, queueLinkMail, recipient } from "./link-mails.js";
import { assertAcceptablePassword, hashPassword } from "./passwords.js";
import { hasActiveFactor } from "./second-factor.js";
import type { Principal, RequestOrigin, ServiceContext } from "./service-context.js";

const ACCEPTED = {
  status: "accepted" as const,
  detail: "If the account exists and has an e-mail address, a reset link is on its way to it.",
};

/** The link and its e-mail are queued in one transaction: no link that is never sent, no mail with a dead link. */
async function queueResetMail(
  ctx: ServiceContext,
  trx: Kysely<Schema>,
  queue: Queues,
  userId: string,
  origin: RequestOrigin,
  sender?: Sender,
): Promise<void> {
  const to = await recipient(ctx, trx, userId);
  const account = to && (await findAccountById(trx, userId));
  if (!to || !account) return;
  if (account.serviceAccount) {
    // no password to reset: the request is recorded as refused, and no link is made (spec 1.9)
    await audit(ctx, trx, {
      action: "password.reset_request",
      outcome: "service_account",
      target: { type: "User", id: userId, name: to.userName },
      origin,
    });
    return;
  }
  if (!mayMailLinkTo({ roles: account.roles, addressesByDelegate: account.credential.addressesByDelegate })) {
    // the address may be someone's who held a token of an admin: no link that opens a privileged account goes there
    await audit(ctx, trx, {
      action: "password.reset_request",
      outcome: "address_unconfirmed",
      target: { type: "User", id: userId, name: to.userName },
      details: { reason: UNCONFIRMED_ADDRESS },
      origin,
    });
    return;
  }
  // someone else signed in asked for it (the support desk's `users reset-password`): theirs, in
  // the trail; and a staff member's link carries its role, as an invitation does
  const other = sender && sender.actor.userId !== userId ? sender : undefined;
  await audit(ctx, trx, {
    action: "password.reset_request",
    ...(other && { actor: other.actor }),
    target: { type: "User", id: userId, name: to.userName },
    origin,
  });
  const now = ctx.clock();
  const expiresAt = new Date(now.getTime() + ctx.resetTokenTtlSeconds * 1000);
  await queueLinkMail(trx, queue.link, {
    purpose: "reset",
    account,
    email: to.email,
    now,
    expiresAt,
    ...(other?.issuerRole && { issuerRole: other.issuerRole }),
  });
}

type ResetRequest = { userName: string } | { email: string };

/** Who asked for a reset while signed in, as the job keeps it. */
interface Sender {
  actor: AuditActor;
  issuerRole?: IssuerRole;
}

/**
 * POST /renewPassword. The answer is the same, and costs the same, whether or not the account
 * exists: the request queues one job, the same insert for every name and address. The look-up,
 * the token and the e-mail are the mail sender's work (resolveResetRequest), off the request path.
 */
export async function requestPasswordReset(
  ctx: ServiceContext,
  input: { userName?: string; email?: string },
  origin: RequestOrigin = {},
  principal?: Principal,
) {
  if ((input.userName === undefined) === (input.email === undefined)) {
    throw invalid("Give exactly one of userName or email.", "/");
  }
  const request: ResetRequest = input.userName !== undefined ? { userName: input.userName } : { email: input.email! };
  // the request's origin travels with the job, for the audit record the sender writes
  const sender: Sender | undefined = principal && {
    actor: actorOf(principal),
    ...(isPrivileged(principal.roles) && { issuerRole: issuerRoleOf(principal) }),
  };
  await ctx.mailer.queueJob("password_reset", { ...request, origin, ...(sender && { sender }) });
  return ACCEPTED;
}

/**
 * The sender's side of a reset request: a token and its e-mail for each active account with an
 * address that the name or address names, in the transaction that ends the job; nothing for
 * anything else.
 */
export async function resolveResetRequest(
  ctx: ServiceContext,
  trx: Kysely<Schema>,
  request: unknown,
  queue: Queues,
): Promise<void> {
  const { userName, email, origin, sender } = (request ?? {}) as {
    userName?: unknown;
    email?: unknown;
    origin?: RequestOrigin;
    sender?: Sender;
  };
  const ids =
    typeof userName === "string"
      ? [(await findAccountByUserName(trx, userName))?.id].filter((id): id is string => Boolean(id))
      : typeof email === "string"
        ? await userIdsByEmail(trx, email)
        : [];
  for (const id of ids) await queueResetMail(ctx, trx, queue, id, origin ?? {}, sender);
}

function invalidToken(): ProblemError {
  return new ProblemError(
    "invalid_reset_token",
    "The reset link is unknown, already used or expired; ask for a new one.",
    {
      errors: [{ path: "/token", message: "unknown, used or expired" }],
    },
  );
}

/** PUT /resetPassword: one use; all sessions end; lockout and firstLogin are cleared; the user is told by e-mail. */
export async function resetPassword(
  ctx: ServiceContext,
  token: string,
  newPassword: string,
  origin: RequestOrigin = {},
): Promise<void> {
  try {
    await resetWithToken(ctx, token, newPassword, origin);
  } catch (error) {
    // a spent or guessed link is worth knowing about; whose it was is not known
    if (error instanceof ProblemError && error.code === "invalid_reset_token") {
      await audit(ctx, ctx.store.db, { action: "password.reset", outcome: error.code, origin });
    }
    throw error;
  }
}

async function resetWithToken(ctx: ServiceContext, token: string, newPassword: string, origin: RequestOrigin) {
  const tokenHash = hashToken(token);
  const pending = await ctx.store.db
    .selectFrom("password_resets")
    .select(["user_id", "expires_at", "used_at", "purpose", "issuer_role", "account_stamp"])
    .where("token_hash", "=", tokenHash)
    .executeTakeFirst();
  const now = ctx.clock();
  if (!pending || pending.used_at || Date.parse(pending.expires_at) <= now.getTime()) throw invalidToken();
  const account = await findAccountById(ctx.store.db, pending.user_id);
  // the account changed since the link was sent (a new password, roles, disabled), or its sender
  // may no longer give this account a password: the link is void, as a used one is
  if (!account || account.serviceAccount || pending.account_stamp !== accountStamp(account)) throw invalidToken();
  if (!issuerStillMay(pending.issuer_role, "link", account)) throw invalidToken();
  // the policy is checked before the token is spent, so that a refused password leaves the link usable
  await assertAcceptablePassword(
    newPassword,
    { userName: account.userName, currentHash: account.credential.passwordHash },
    ctx.passwordPolicy,
  );
  const passwordHash = await hashPassword(newPassword);
  const factorActive = await hasActiveFactor(ctx, account.id);
  // the notice is queued with the change it reports
  await ctx.mailer.transaction(async (trx, queue) => {
    if (!(await consumeResetToken(trx, tokenHash, now))) throw invalidToken();
    // the other pending links go with the old password (saveCredential)
    // the link proves the mailbox, not the second factor: while one is active, the count (which
    // holds its wrong codes) and any back-off stay
    const failures = factorActive ? {} : { failedLogins: 0, lockedUntil: null };
    await saveCredential(trx, account.id, { passwordHash, firstLogin: false, ...failures }, now);
    const ended = await revokeUserSessions(trx, account.id, now);
    const tokensRevoked = await revokeUserApiTokens(trx, account.id, now);
    await audit(ctx, trx, {
      action: "password.reset",
      actor: { userId: account.id, userName: account.userName },
      target: { type: "User", id: account.id, name: account.userName },
      origin,
      details: {
        via: pending.purpose === "invitation" ? "invitation" : "reset link",
        sessionsEnded: ended,
        ...(tokensRevoked > 0 && { tokensRevoked }),
      },
    });
    // the first password, set through an invitation, changed nothing the user must be warned of
    if (pending.purpose === "invitation") return;
    const to = await recipient(ctx, trx, account.id);
    if (!to) return;
    const text = `Hello ${to.userName},\n\nyour bizctl password was changed through a reset link at ${now.toISOString()}, and every session was ended. If this was not you, tell your administrator at once.\n`;
    await queue.mail({
      to: to.email,
      subject: "Your bizctl password was changed",
      text,
      html: `<p>${escapeHtml(text).replace(/\n\n/g, "</p><p>")}</p>`,
    });
  });
  await forgetNameFailures(ctx, account.userName);
}
