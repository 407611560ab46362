/**
 * The Bearer check of an API token (spec 1.7), on every request that presents one: the token by
 * the hash of what was sent, its owner's current state read with it, so that a revoked or expired
 * token, or a disabled, deleted or demoted owner, counts from the next request on.
 */

import { findApiTokenByHash, touchApiToken } from "../store/api-tokens-repo.js";
import { toAccount } from "../store/users-repo.js";
import { accountPrincipal } from "./accounts.js";
import { hashApiToken, isWellFormedApiToken, readScopes } from "./api-tokens.js";
import { audit, userTarget } from "./audit.js";
import { refusedToken } from "./bearer-challenge.js";
import type { Principal, RequestOrigin, ServiceContext } from "./service-context.js";

/** "Last used" is written when it is older than this, or when the client address changes. */
export const API_TOKEN_TOUCH_MS = 60_000;

export async function authenticateApiToken(
  ctx: ServiceContext,
  token: string,
  origin: RequestOrigin,
): Promise<Principal> {
  // the lookup is by the hash: what the request sent never reaches a query, a log or an answer
  const row = isWellFormedApiToken(token) ? await findApiTokenByHash(ctx.store.db, hashApiToken(token)) : undefined;
  if (!row) throw refusedToken("token_invalid", "This API token is not known.");
  if (row.revoked_at) throw refusedToken("token_revoked", "This API token has been revoked.");
  const now = ctx.clock();
  if (Date.parse(row.expires_at) <= now.getTime()) {
    throw refusedToken("token_expired", "This API token has expired; create a new one.");
  }
  const account = toAccount(row);
  if (!account.active) throw refusedToken("token_revoked", "The account of this API token is disabled.");
  await noteUse(ctx, row, account, origin, now);
  // the owner's roles as they are now: a demoted owner's token loses what the owner lost; and
  // confined as a login would be (a token cannot enroll, its owner can). No session: the token is
  // its own credential (logout with it revokes it)
  const principal = accountPrincipal(ctx, account, row, row.token_id, new Date(row.expires_at));
  principal.delegated = "apiToken";
  if (account.serviceAccount) principal.serviceAccount = true;
  principal.apiTokenId = row.token_id;
  principal.apiTokenName = row.token_name;
  principal.scopes = readScopes(row.scopes);
  return principal;
}

type TokenRow = NonNullable<Awaited<ReturnType<typeof findApiTokenByHash>>>;

/**
 * Records the use: at most one write a minute from one address, as sessions do; a use from an
 * address the token was not last used from is written at once and recorded in the audit trail.
 */
async function noteUse(
  ctx: ServiceContext,
  row: TokenRow,
  owner: { id: string; userName: string },
  origin: RequestOrigin,
  now: Date,
): Promise<void> {
  const ip = origin.ip ?? "";
  const newAddress = row.last_used_ip !== ip;
  if (!newAddress && row.last_used_at && now.getTime() - Date.parse(row.last_used_at) < API_TOKEN_TOUCH_MS) return;
  const staleBefore = new Date(now.getTime() - API_TOKEN_TOUCH_MS).toISOString();
  await ctx.store.db.transaction().execute(async (trx) => {
    // the conditional write decides between concurrent requests: the one that wrote records it
    const wrote = await touchApiToken(trx, row.token_id, now.toISOString(), ip, staleBefore);
    if (wrote && newAddress) {
      await audit(ctx, trx, {
        action: "token.use",
        actor: { userId: owner.id, userName: owner.userName },
        target: userTarget(owner),
        origin,
        details: {
          tokenId: row.token_id,
          name: row.token_name,
          ...(row.last_used_ip ? { previousIp: row.last_used_ip } : { firstUse: true }),
        },
      });
    }
  });
}
