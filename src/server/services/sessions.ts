import { formatTimestamp } from "../http/timestamps.js";
import { ProblemError } from "../problem-error.js";
import { listOpenSessions, revokeSessionOf, revokeUserSessions } from "../store/sessions-repo.js";
import { findAccountById } from "../store/users-repo.js";
import { auditBy } from "./audit.js";
import { assertCan, type ResourceAction } from "./resource-policy.js";
import type { Principal, ServiceContext } from "./service-context.js";

type SessionRow = Awaited<ReturnType<typeof listOpenSessions>>[number];

/** To the second: "last used" is only kept to the minute anyway. */
const seconds = (iso: string) => formatTimestamp(new Date(Math.floor(Date.parse(iso) / 1000) * 1000));

function toSession(row: SessionRow, currentId?: string) {
  return {
    id: row.id,
    created: seconds(row.created_at),
    ...(row.last_used_at && { lastUsed: seconds(row.last_used_at) }),
    expires: seconds(row.expires_at),
    ...(row.client_ip && { clientIp: row.client_ip }),
    ...(row.user_agent && { userAgent: row.user_agent }),
    ...(currentId !== undefined && { current: row.id === currentId }),
  };
}

function noSuchSession(id: string): ProblemError {
  return new ProblemError("not_found", `No open session with id ${id}.`);
}

export async function listOwnSessions(ctx: ServiceContext, principal: Principal) {
  const rows = await listOpenSessions(ctx.store.db, principal.userId, ctx.clock());
  return { sessions: rows.map((row) => toSession(row, principal.sessionId)) };
}

/** `auth sign-out --others`: every session but the one asking. */
export async function endOwnOtherSessions(ctx: ServiceContext, principal: Principal) {
  const ended = await ctx.store.db.transaction().execute(async (trx) => {
    const count = await revokeUserSessions(trx, principal.userId, ctx.clock(), principal.sessionId);
    await auditBy(ctx, trx, principal, {
      action: "sessions.end",
      target: ownTarget(principal),
      details: { ended: count, others: true },
    });
    return count;
  });
  return { ended };
}

const ownTarget = (principal: Principal) => ({ type: "User", id: principal.userId, name: principal.userName });

export async function endOwnSession(ctx: ServiceContext, principal: Principal, sessionId: string): Promise<void> {
  const ended = await ctx.store.db.transaction().execute(async (trx) => {
    const done = await revokeSessionOf(trx, principal.userId, sessionId, ctx.clock());
    if (done)
      await auditBy(ctx, trx, principal, {
        action: "sessions.end",
        target: ownTarget(principal),
        details: { ended: 1 },
      });
    return done;
  });
  if (!ended) throw noSuchSession(sessionId);
}

/** The User a staff member acts on, checked against the roles table (404 for anything not a User). */
async function targetUser(ctx: ServiceContext, principal: Principal, userId: string, action: ResourceAction) {
  const account = await findAccountById(ctx.store.db, userId);
  if (!account) throw new ProblemError("not_found", `No user with id ${userId}.`);
  assertCan(principal, action, "User", { id: account.id, roles: account.roles });
  return account;
}

/** Whoever may see a User's account state (its count of open sessions) may see the sessions. */
export async function listUserSessions(ctx: ServiceContext, principal: Principal, userId: string) {
  const account = await targetUser(ctx, principal, userId, "readAccountState");
  const rows = await listOpenSessions(ctx.store.db, account.id, ctx.clock());
  return {
    sessions: rows.map((row) => toSession(row, account.id === principal.userId ? principal.sessionId : undefined)),
  };
}

/**
 * Ends a User's sessions, all or one. The session is read on every request, so its token is
 * refused from the next request on, on every instance (as after a logout).
 */
export async function endUserSessions(ctx: ServiceContext, principal: Principal, userId: string, sessionId?: string) {
  const account = await targetUser(ctx, principal, userId, "endSessions");
  const now = ctx.clock();
  const target = { type: "User", id: account.id, name: account.userName };
  const ended = await ctx.store.db.transaction().execute(async (trx) => {
    const count =
      sessionId === undefined
        ? await revokeUserSessions(trx, account.id, now)
        : Number(await revokeSessionOf(trx, account.id, sessionId, now));
    if (count > 0) {
      await auditBy(ctx, trx, principal, { action: "sessions.end", target, details: { ended: count } });
    }
    return count;
  });
  if (sessionId !== undefined && ended === 0) throw noSuchSession(sessionId);
  return { ended };
}
