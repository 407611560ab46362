import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import { escapeHtml } from "../escape-html.js";
import type { MailMessage, QueueLink } from "../mail/types.js";
import { bindLinkToken, saveResetToken } from "../store/reset-tokens-repo.js";
import { findResource } from "../store/resources-repo.js";
import type { Schema } from "../store/schema.js";
import { findAccountById, linkAddressOf, type UserAccount } from "../store/users-repo.js";
import { accountStamp, type IssuerRole, issuerStillMay } from "./issued-credentials.js";
import { randomToken } from "./random-token.js";
import { serviceAccountRefusal } from "./service-account-rules.js";
import type { ServiceContext } from "./service-context.js";

/**
 * The e-mails that carry a single-use link (a password reset, an invitation). The link's token is
 * made as the message is sent, never before: the queue keeps what the message says beside it,
 * and the link row a hash of a token nobody holds until then. So no link is ever written to the
 * database, its write-ahead log, a backup or a dump (only the outbox directory of the embedded
 * mailer, which is a mailbox, holds the message as delivered).
 */

export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/** The user's name and primary e-mail, if it is an active User with one. */
export async function recipient(ctx: ServiceContext, db: Kysely<Schema>, userId: string) {
  const row = await findResource(db, userId);
  if (row?.resource_type !== "User") return undefined;
  const attributes = JSON.parse(row.attributes) as Record<string, unknown>;
  if (attributes.active === false) return undefined;
  const email = linkAddressOf(attributes);
  if (!email) {
    ctx.log().warn({ userId }, "a link was asked for a user without an e-mail address");
    return undefined;
  }
  return { userName: String(attributes.userName), email };
}

/** Why recipient() found no one, in words for the person who asked for the mail. */
export async function noRecipientReason(db: Kysely<Schema>, userId: string): Promise<string> {
  const row = await findResource(db, userId);
  const attributes = row ? (JSON.parse(row.attributes) as Record<string, unknown>) : {};
  return attributes.active === false ? "the account is disabled" : "the user has no e-mail address";
}

export type LinkPurpose = "reset" | "invitation";

/** What the queue keeps of a link message: no secret. */
interface LinkContent {
  purpose: LinkPurpose;
}

const SUBJECTS: Record<LinkPurpose, string> = {
  reset: "Reset your bizctl password",
  invitation: "You are invited to bizctl: set your password",
};

function duration(seconds: number): string {
  if (seconds >= 7200) return `${Math.round(seconds / 3600)} hours`;
  if (seconds >= 120) return `${Math.round(seconds / 60)} minutes`;
  return `${seconds} seconds`;
}

/** Paragraphs as text and as HTML, the link a paragraph of its own. */
function message(to: string, subject: string, paragraphs: string[], link: string): MailMessage {
  return {
    to,
    subject,
    text: `${paragraphs.join("\n\n")}\n`,
    html: paragraphs
      .map((line) =>
        line === link ? `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>` : `<p>${escapeHtml(line)}</p>`,
      )
      .join(""),
  };
}

function resetMail(to: { userName: string; email: string }, link: string, ttlSeconds: number): MailMessage {
  return message(
    to.email,
    SUBJECTS.reset,
    [
      `Hello ${to.userName},`,
      `someone (hopefully you) asked to reset your password. Open this link within ${duration(ttlSeconds)} to choose a new one:`,
      link,
      "The link works once. If you did not ask for it, ignore this message: your password stays as it is.",
    ],
    link,
  );
}

function invitationMail(to: { userName: string; email: string }, link: string, ttlSeconds: number): MailMessage {
  return message(
    to.email,
    SUBJECTS.invitation,
    [
      `Hello ${to.userName},`,
      `you are invited to bizctl. An account was opened for you with the user name ${to.userName}.`,
      `Open this link within ${duration(ttlSeconds)} to set your password:`,
      link,
      "The link works once, and only the latest invitation's link works. Once your password is set, log in with your user name and that password. If the link has expired, ask your administrator to send the invitation again.",
    ],
    link,
  );
}

/**
 * Queues a link message for `account` and its link row, in `trx`: the row is bound to the
 * message, and holds the hash of a token nobody knows until the message is sent.
 */
export async function queueLinkMail(
  trx: Kysely<Schema>,
  queueLink: QueueLink,
  link: {
    purpose: LinkPurpose;
    account: UserAccount;
    email: string;
    now: Date;
    expiresAt: Date;
    issuerRole?: IssuerRole;
  },
): Promise<void> {
  if (link.account.serviceAccount) throw serviceAccountRefusal(link.account.userName, "get a reset or invitation link");
  const content: LinkContent = { purpose: link.purpose };
  const mailId = await queueLink({ to: link.email, subject: SUBJECTS[link.purpose], content });
  await saveResetToken(trx, {
    tokenHash: hashToken(randomToken(32)),
    userId: link.account.id,
    createdAt: link.now,
    expiresAt: link.expiresAt,
    ...(link.purpose === "invitation" && { purpose: "invitation" as const }),
    ...(link.issuerRole && { issuerRole: link.issuerRole }),
    accountStamp: accountStamp(link.account),
    mailId,
  });
}

/**
 * The sender's half (the mailer's link renderer): a fresh token takes the place of the link
 * row's, and the message is made around it. A reset link lasts its time from now, as its mail
 * says; an invitation keeps the end the inviter was told. Nothing is sent for a link used or
 * voided meanwhile, or for an account that changed since (the link would be refused anyway).
 */
export async function renderLinkMail(
  ctx: ServiceContext,
  trx: Kysely<Schema>,
  mailId: string,
  content: unknown,
): Promise<MailMessage | undefined> {
  const purpose = (content as Partial<LinkContent> | null)?.purpose;
  if (purpose !== "reset" && purpose !== "invitation") return undefined;
  const now = ctx.clock();
  const token = randomToken(32);
  const bound = await bindLinkToken(trx, {
    mailId,
    tokenHash: hashToken(token),
    now,
    ...(purpose === "reset" && { expiresAt: new Date(now.getTime() + ctx.resetTokenTtlSeconds * 1000) }),
  });
  if (!bound) return undefined;
  const account = await findAccountById(trx, bound.user_id);
  const to = account && (await recipient(ctx, trx, account.id));
  // a service account never gets a link, whatever queued one (spec 1.9)
  if (!account || !to || account.serviceAccount || bound.account_stamp !== accountStamp(account)) return undefined;
  if (!issuerStillMay(bound.issuer_role, "link", account)) return undefined;
  if (purpose === "reset") {
    return resetMail(to, `${ctx.linkBase()}/resetPassword?token=${token}`, ctx.resetTokenTtlSeconds);
  }
  return invitationMail(to, `${ctx.linkBase()}/resetPassword?token=${token}&invitation=1`, ctx.inviteTtlSeconds);
}
