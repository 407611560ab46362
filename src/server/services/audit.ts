import type { Kysely } from "kysely";
import { ProblemError } from "../problem-error.js";
import { insertAudit, type NewAuditRow } from "../store/audit-repo.js";
import type { Schema } from "../store/schema.js";
import type { Principal, RequestOrigin, ServiceContext } from "./service-context.js";

/**
 * The audit trail's write side. Every record is written with the database handle of the change
 * it records (the transaction), so that there is no change without its record and no record of
 * a change that rolled back. A refused action changes nothing: its record is written alone.
 * Details never hold a password, hash, token, secret or link: callers pass names, ids and flags.
 */

export type AuditAction =
  | "login"
  | "logout"
  | "lockout"
  | "unlock"
  | "password.change"
  | "password.reset_request"
  | "password.reset"
  | "password.set"
  | "password.void"
  | "user.create"
  | "user.update"
  | "user.delete"
  | "user.restore"
  | "user.purge"
  | "user.disable"
  | "user.enable"
  | "user.roles"
  | "user.invite"
  | "user.recover_admin"
  | "sessions.end"
  | "mfa.enroll"
  | "mfa.activate"
  | "mfa.remove"
  | "mfa.reset"
  | "token.create"
  | "token.revoke"
  | "token.use"
  | "oauth.consumer.create"
  | "oauth.consumer.update"
  | "oauth.consumer.delete"
  | "oauth.grant.approve"
  | "oauth.grant.deny"
  | "oauth.grant.revoke"
  | "key.rotate"
  | "event.create"
  | "event.update"
  | "event.delete"
  | "event.batch"
  | "event.import"
  | "resource.create"
  | "resource.update"
  | "resource.delete"
  | "group.create"
  | "group.update"
  | "group.roles"
  | "group.members"
  | "group.delete"
  | "group.restore"
  | "group.purge";

export interface AuditActor {
  userId?: string;
  userName?: string;
  consumerId?: string;
  apiTokenId?: string;
  /** the token's name as it is now: the record keeps it after the token is revoked or deleted */
  apiTokenName?: string;
}

export interface AuditTarget {
  type: string;
  id?: string;
  name?: string;
}

export interface AuditEntry {
  action: AuditAction;
  actor?: AuditActor;
  target?: AuditTarget;
  /** 'success' unless given: the problem code of a refused action */
  outcome?: string;
  origin?: RequestOrigin;
  details?: Record<string, unknown>;
}

/** A user agent is kept to recognise a client, not in full (as on sessions). */
const USER_AGENT_MAX = 256;

let lastMs = 0;
let counter = 0;

/**
 * An id that sorts in time order as text: milliseconds (9 base-36 digits, good until the year
 * 5138), a counter within the millisecond (monotonic in this process even if the clock steps
 * back), and randomness so that two processes writing in the same millisecond do not collide.
 */
export function auditId(nowMs: number): string {
  if (nowMs > lastMs) {
    lastMs = nowMs;
    counter = 0;
  } else {
    counter++;
  }
  const random = crypto.getRandomValues(new Uint32Array(2));
  const tail =
    (random[0]! % 36 ** 4).toString(36).padStart(4, "0") + (random[1]! % 36 ** 4).toString(36).padStart(4, "0");
  return lastMs.toString(36).padStart(9, "0") + counter.toString(36).padStart(4, "0") + tail;
}

export const AUDIT_ID_PATTERN = /^[0-9a-z]{21}$/;

/** The lowest id a record written at `ms` or later can have: ids below it are older. */
export const auditIdFloor = (ms: number) => ms.toString(36).padStart(9, "0");

/** The actor of an authenticated request: the user, and the consumer acting for them. */
export function actorOf(principal: Principal): AuditActor {
  return {
    userId: principal.userId,
    userName: principal.userName,
    ...(principal.consumerId && { consumerId: principal.consumerId }),
    ...(principal.apiTokenId && { apiTokenId: principal.apiTokenId }),
    ...(principal.apiTokenName !== undefined && { apiTokenName: principal.apiTokenName }),
  };
}

/** The target of a record about a user account. */
export const userTarget = (account: { id: string; userName: string }): AuditTarget => ({
  type: "User",
  id: account.id,
  name: account.userName,
});

/** Writes one record with `db`: the transaction of the change it records. */
export async function audit(ctx: Pick<ServiceContext, "clock">, db: Kysely<Schema>, entry: AuditEntry): Promise<void> {
  await insertAudit(db, auditRow(ctx, entry));
}

/** The row of one record, stamped now: for a store function that writes it with its change. */
export function auditRow(ctx: Pick<ServiceContext, "clock">, entry: AuditEntry): NewAuditRow {
  const now = ctx.clock();
  return {
    id: auditId(now.getTime()),
    time: now.toISOString(),
    actor_id: entry.actor?.userId ?? null,
    actor_user_name: entry.actor?.userName ?? null,
    actor_consumer_id: entry.actor?.consumerId ?? null,
    actor_api_token_id: entry.actor?.apiTokenId ?? null,
    actor_api_token_name: entry.actor?.apiTokenName ?? null,
    action: entry.action,
    target_type: entry.target?.type ?? null,
    target_id: entry.target?.id ?? null,
    target_name: entry.target?.name ?? null,
    outcome: entry.outcome ?? "success",
    request_id: entry.origin?.requestId ?? null,
    client_ip: entry.origin?.ip ?? null,
    user_agent: entry.origin?.userAgent?.slice(0, USER_AGENT_MAX) ?? null,
    details: entry.details && Object.keys(entry.details).length > 0 ? JSON.stringify(entry.details) : null,
  };
}

/** The record of an action by `principal`. */
export function auditBy(
  ctx: ServiceContext,
  db: Kysely<Schema>,
  principal: Principal,
  entry: Omit<AuditEntry, "actor" | "origin">,
): Promise<void> {
  return audit(ctx, db, { ...entry, actor: actorOf(principal), origin: principal.origin });
}

/**
 * Runs a refusable action: when it fails with a problem (forbidden, conflict, a wrong password),
 * the refusal is recorded on its own (the action's transaction, if any, rolled back) and the
 * problem goes on to the caller. A failure of the record itself never hides the problem.
 */
export async function refusalsRecorded<T>(
  ctx: ServiceContext,
  entry: (error: ProblemError) => AuditEntry | undefined,
  action: () => Promise<T>,
): Promise<T> {
  try {
    return await action();
  } catch (error) {
    const record = error instanceof ProblemError ? entry(error) : undefined;
    if (record) await recordRefusal(ctx, record, (error as ProblemError).code);
    throw error;
  }
}

/** Records a refused action on its own, with the problem code as its outcome. */
export async function recordRefusal(ctx: ServiceContext, record: AuditEntry, code: string): Promise<void> {
  await audit(ctx, ctx.store.db, { ...record, outcome: code }).catch((failure) => {
    ctx.metrics.auditWriteFailure();
    ctx.log().warn({ err: failure }, "could not record a refused action in the audit trail");
  });
}
