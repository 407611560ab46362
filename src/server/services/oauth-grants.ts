/**
 * Connected applications: the token credentials users granted. Every user sees and revokes their
 * own; admins everyone's. When a grant was last used is kept to the minute, so that the signed
 * requests of a busy partner do not each write to the database.
 */
import { allows } from "../../contract/policy/index.js";
import { formatTimestamp } from "../http/timestamps.js";
import { ProblemError } from "../problem-error.js";
import * as repo from "../store/oauth-repo.js";
import { auditBy } from "./audit.js";
import type { Principal, ServiceContext } from "./service-context.js";

/** A use is recorded when the last one recorded is older than this. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** token → when this process last recorded its use; pruned as it grows */
const recorded = new WeakMap<ServiceContext, Map<string, number>>();

/** Records that token credentials were used: at most once a minute per token and process. */
export async function noteGrantUse(ctx: ServiceContext, token: string): Promise<void> {
  const now = ctx.clock().getTime();
  let seen = recorded.get(ctx);
  if (!seen) {
    seen = new Map();
    recorded.set(ctx, seen);
  }
  const last = seen.get(token);
  if (last !== undefined && now - last < LAST_USED_RESOLUTION_MS) return;
  if (seen.size >= 10_000) {
    for (const [key, at] of seen) if (now - at >= LAST_USED_RESOLUTION_MS) seen.delete(key);
  }
  seen.set(token, now);
  // conditional, for the other instances that share the database
  await repo.touchToken(
    ctx.store.db,
    token,
    new Date(now).toISOString(),
    new Date(now - LAST_USED_RESOLUTION_MS).toISOString(),
  );
}

/** The live grants of the caller, or (admin) of everyone or of one user. */
export async function listGrants(ctx: ServiceContext, principal: Principal, userId?: string) {
  const everyones = allows(principal, "oauth-grants:list-other");
  if (!everyones && userId !== undefined && userId !== principal.userId) {
    throw new ProblemError("forbidden", "Only admins list the grants of other users; drop --user.");
  }
  const rows = await repo.listTokens(ctx.store.db, {
    userId: everyones ? userId : principal.userId,
    nowIso: ctx.clock().toISOString(),
  });
  const data = rows.map((row) => {
    const user = JSON.parse(row.user_attributes) as { userName?: unknown };
    const consumer = JSON.parse(row.consumer_attributes) as { consumerKey?: unknown; name?: unknown };
    return {
      token: row.token,
      userId: row.user_id,
      userName: String(user.userName ?? ""),
      consumerId: row.consumer_id,
      consumerKey: String(consumer.consumerKey ?? ""),
      ...(typeof consumer.name === "string" && { consumerName: consumer.name }),
      createdAt: formatTimestamp(new Date(row.created_at)),
      ...(row.last_used_at && { lastUsedAt: formatTimestamp(new Date(row.last_used_at)) }),
      expiresAt: formatTimestamp(new Date(row.expires_at)),
    };
  });
  return { data, total: data.length };
}

/** Revokes a grant: the caller's own, or (admin) anyone's. Another user's grant is not found. */
export async function revokeGrant(ctx: ServiceContext, principal: Principal, token: string): Promise<void> {
  const admin = allows(principal, "oauth-grants:revoke-other");
  const revoked = await ctx.store.db.transaction().execute(async (trx) => {
    const grant = await repo.deleteToken(trx, token, admin ? undefined : principal.userId);
    // the token itself is not recorded: the grant is named by its user and its consumer
    if (grant) {
      await auditBy(ctx, trx, principal, {
        action: "oauth.grant.revoke",
        target: { type: "User", id: grant.userId },
        details: { consumerId: grant.consumerId },
      });
    }
    return grant;
  });
  if (!revoked) {
    throw new ProblemError(
      "not_found",
      `No OAuth grant${admin ? "" : " of yours"} with this token (see 'bizctl oauth tokens list').`,
    );
  }
}
