import type { Kysely } from "kysely";
import type { Role } from "../../contract/route.js";
import { formatTimestamp } from "../http/timestamps.js";
import { ProblemError } from "../problem-error.js";
import { revokeUserApiTokens } from "../store/api-tokens-repo.js";
import { replaceFailures } from "../store/proof-failures-repo.js";
import type { Schema } from "../store/schema.js";
import {
  createSession,
  endSessions,
  findLiveSession,
  pruneSessions,
  revokeSession,
  revokeUserSessions,
  touchSession,
} from "../store/sessions-repo.js";
import { countUnusedRecoveryCodes } from "../store/totp-repo.js";
import { type Caller, findAccountById, saveCredential, toCaller, type UserAccount } from "../store/users-repo.js";
import { revokeOwnApiToken } from "./api-tokens.js";
import { actorOf, audit, auditBy, refusalsRecorded, userTarget } from "./audit.js";
import { isVoidTemporaryPassword } from "./issued-credentials.js";
import { nameKey } from "./login-backoff.js";
import { readFacts, requiresFactor, runStage } from "./login-checks.js";
import { checkPassword, countedProof, voidTemporaryPassword } from "./password-check.js";
import { assertAcceptablePassword, hashPassword, verifyPassword } from "./passwords.js";
import { assertCan, can } from "./resource-policy.js";
import { hasActiveFactor, proveLoginFactor } from "./second-factor.js";
import type { Principal, RequestOrigin, ServiceContext } from "./service-context.js";

// An account's own life through the API: logins and their sessions, the Bearer check of every
// request, its password change, and the unlock staff give it.

function summary(account: UserAccount) {
  return {
    id: account.id,
    userName: account.userName,
    ...(account.displayName && { displayName: account.displayName }),
    roles: account.roles,
  };
}

/** The name's failures do not matter once its password was right. */
const NO_FAILURES = { count: 0, lastAt: 0 };

/** Where a login comes from, recorded on its session and in the audit trail. */
export type LoginClient = RequestOrigin;

/** A user agent is kept for a person to recognise a session, not in full. */
const USER_AGENT_MAX = 256;

/**
 * "Last used" is refreshed when it is older than this, so a busy session costs one write a
 * minute, not one per request (the session read on every request stays a read).
 */
export const SESSION_TOUCH_MS = 60_000;

/** The success half of a login: the counters cleared and the login recorded, with `trx`. */
async function loggedIn(
  ctx: ServiceContext,
  trx: Kysely<Schema>,
  account: UserAccount,
  origin: RequestOrigin,
  via: string,
  details: Record<string, unknown> = {},
) {
  await saveCredential(trx, account.id, { loggedIn: true }, ctx.clock());
  // a proof counted while this login's was checked keeps the count: a burst does not hide behind a success
  const seen = account.credential;
  await replaceFailures(trx, account.id, seen, { ...seen, failedLogins: 0, lockedUntil: null }, ctx.clock());
  await audit(ctx, trx, {
    action: "login",
    actor: { userId: account.id, userName: account.userName },
    target: userTarget(account),
    origin,
    details: { via, ...details },
  });
}

/** A password check that logs the user in without a session of its own (the OAuth authorization page). */
export async function checkPasswordAndRecord(
  ctx: ServiceContext,
  userName: string,
  password: string,
  origin: RequestOrigin,
  via: string,
): Promise<UserAccount> {
  const account = await checkPassword(ctx, userName, password, origin, via);
  // a page that asks for no code cannot open an account that has a second factor
  if (await hasActiveFactor(ctx, account.id)) {
    throw new ProblemError(
      "mfa_required",
      "This account has a second factor, which this page does not ask for: approve from a signed-in client.",
    );
  }
  await ctx.store.db.transaction().execute((trx) => loggedIn(ctx, trx, account, origin, via));
  return account;
}

export async function login(
  ctx: ServiceContext,
  userName: string,
  password: string,
  client: LoginClient = {},
  otp?: string,
) {
  const account = await checkPassword(ctx, userName, password, client);
  const proof = await proveLoginFactor(ctx, account, otp, client, "login");
  const now = ctx.clock();
  const sessionId = crypto.randomUUID();
  let session: { mfaEnrollmentRequired: boolean; firstLogin: boolean } | undefined;
  const { token, expiresAt } = await ctx.keys.sign(
    { sub: account.id, jti: sessionId, roles: account.roles },
    ctx.tokenTtlSeconds,
  );
  await ctx.store.db.transaction().execute(async (trx) => {
    // the session stage of the login's checks (login-checks.ts); the factor is known from the proof
    const facts = readFacts(ctx, trx, account, NO_FAILURES);
    const factorProved = { active: proof !== undefined, recoveryCodesLeft: 0, recoveryCodesUsed: 0 };
    const found = new Map(
      (await runStage({ ...facts, factor: async () => factorProved }, "session")).map((f) => [f.code, f]),
    );
    // under --require-mfa a login without a factor may only enroll
    session = {
      mfaEnrollmentRequired: found.has("mfa_enrollment_required"),
      firstLogin: found.has("temporary_password"),
    };
    await loggedIn(ctx, trx, account, client, "login", {
      ...(proof && { secondFactor: proof }),
      ...(session.mfaEnrollmentRequired && { mfaEnrollmentRequired: true }),
    });
    // a cap on the sessions one user holds: the new one takes the place of the oldest
    if (found.has("session_cap")) {
      const excess = (await facts.loginSessions()).slice(Math.max(0, ctx.maxSessionsPerUser - 1)).map((row) => row.id);
      const ended = await endSessions(trx, excess, now);
      await audit(ctx, trx, {
        action: "sessions.end",
        actor: { userId: account.id, userName: account.userName },
        target: userTarget(account),
        origin: client,
        details: { ended, reason: "session cap", maxSessions: ctx.maxSessionsPerUser },
      });
    }
    await createSession(trx, {
      id: sessionId,
      userId: account.id,
      createdAt: now,
      expiresAt,
      ...(client.ip && { clientIp: client.ip }),
      ...(client.userAgent && { userAgent: client.userAgent.slice(0, USER_AGENT_MAX) }),
    });
  });
  await pruneSessions(ctx.store.db, now);
  // a recovery code was spent: the person learns how many are left before they run out
  const recoveryCodesLeft = proof === "recovery" ? await countUnusedRecoveryCodes(ctx.store.db, account.id) : undefined;
  return {
    token,
    tokenType: "Bearer" as const,
    expiresAt: formatTimestamp(expiresAt),
    firstLogin: session!.firstLogin,
    ...(session!.mfaEnrollmentRequired && { mfaEnrollmentRequired: true }),
    ...(recoveryCodesLeft !== undefined && { recoveryCodesLeft }),
    user: summary(account),
  };
}

/** Whether the server requires a second factor of a holder of any of `roles` (`--require-mfa`). */
export function mustEnroll(ctx: ServiceContext, roles: readonly Role[]): boolean {
  return requiresFactor(ctx.requireMfaRoles, roles);
}

/**
 * Whether the caller is confined to enrolling: the policy requires a factor of its owner, who has
 * none (it was reset, or the policy or the role came after the credential). Read with the
 * credential on every request, whatever the credential (a login, an API token, an application's grant).
 */
function enrollmentRequired(
  ctx: ServiceContext,
  row: { mfa_enabled?: number | string | null },
  roles: readonly Role[],
): boolean {
  return Number(row.mfa_enabled) !== 1 && mustEnroll(ctx, roles);
}

/**
 * Who a credential acts for, as its account is now: what a login, an API token and an
 * application's grant have alike in their principal, with the credential's `sessionId` and
 * `expiresAt` (each adds its own further fields). Built as one literal and not spread into
 * another: on the Bearer check of every request, `{ ...principal, sessionId }` cost several
 * microseconds and left an object whose every later read went the slow way.
 */
export function accountPrincipal(
  ctx: ServiceContext,
  account: Caller,
  row: { mfa_enabled?: number | string | null },
  sessionId: string,
  expiresAt: Date,
): Principal {
  const principal: Principal = {
    userId: account.id,
    userName: account.userName,
    displayName: account.displayName,
    roles: account.roles,
    firstLogin: account.credential.firstLogin,
    sessionId,
    expiresAt,
  };
  if (enrollmentRequired(ctx, row, account.roles)) principal.mfaEnrollmentRequired = true;
  return principal;
}

/** Resolves a Bearer token to its caller; the revocation check is exact on every request. */
export async function authenticateBearer(ctx: ServiceContext, token: string): Promise<Principal> {
  const claims = await ctx.keys.verify(token);
  const row = await findLiveSession(ctx.store.db, claims.jti);
  if (!row || row.id !== claims.sub || row.revoked_at) {
    throw new ProblemError("token_revoked", "The session of this token has ended; log in again.");
  }
  const account = toCaller(row);
  if (!account.active) throw new ProblemError("token_revoked", "The account is disabled.");
  const now = ctx.clock().getTime();
  if (!row.last_used_at || now - Date.parse(row.last_used_at) >= SESSION_TOUCH_MS) {
    await touchSession(ctx.store.db, claims.jti, new Date(now));
  }
  return accountPrincipal(ctx, account, row, claims.jti, new Date(claims.exp * 1000));
}

export async function logout(ctx: ServiceContext, principal: Principal): Promise<void> {
  // an API token has no session: a logout with it revokes it, as a logout ends a session
  if (principal.apiTokenId) return revokeOwnApiToken(ctx, principal, principal.apiTokenId);
  await ctx.store.db.transaction().execute(async (trx) => {
    await revokeSession(trx, principal.sessionId, ctx.clock());
    await auditBy(ctx, trx, principal, {
      action: "logout",
      target: { type: "User", id: principal.userId, name: principal.userName },
    });
  });
}

export function whoAmI(principal: Principal) {
  return {
    loggedIn: true as const,
    user: {
      id: principal.userId,
      userName: principal.userName,
      ...(principal.displayName && { displayName: principal.displayName }),
      roles: principal.roles,
    },
    expiresAt: formatTimestamp(principal.expiresAt),
    credential: presentedCredential(principal),
  };
}

/** What the caller presented: an API token's holder learns which token it is (its name and scopes). */
function presentedCredential(principal: Principal) {
  if (principal.delegated === "apiToken") {
    return {
      type: "api-token" as const,
      ...(principal.apiTokenId && { id: principal.apiTokenId }),
      ...(principal.apiTokenName && { name: principal.apiTokenName }),
      scopes: [...(principal.scopes ?? [])],
    };
  }
  return { type: principal.delegated === "oauth" ? ("oauth" as const) : ("session" as const) };
}

export async function isFirstLogin(ctx: ServiceContext, principal: Principal, employeeId?: string) {
  if (!employeeId || employeeId === principal.userId) {
    return { employeeId: principal.userId, firstLogin: principal.firstLogin };
  }
  // whether a first login is pending is account state: the staff see it (the roles table)
  if (!can(principal, "readAccountState", "User")) {
    throw new ProblemError("forbidden", "Only admin and support staff may ask about another employee.");
  }
  const account = await findAccountById(ctx.store.db, employeeId);
  if (!account) throw new ProblemError("not_found", `No employee with id ${employeeId}.`);
  return { employeeId: account.id, firstLogin: account.credential.firstLogin };
}

export async function changePassword(
  ctx: ServiceContext,
  principal: Principal,
  lastPassword: string,
  newPassword: string,
): Promise<void> {
  const target = { type: "User", id: principal.userId, name: principal.userName };
  const record = { action: "password.change" as const, actor: actorOf(principal), origin: principal.origin, target };
  await refusalsRecorded(
    ctx,
    (error) => (error.code === "invalid_credentials" ? record : undefined),
    async () => {
      const account = await findAccountById(ctx.store.db, principal.userId);
      const hash = account?.credential.passwordHash;
      const wrong = () => new ProblemError("invalid_credentials", "The current password is wrong.");
      if (!account || !hash) throw wrong();
      // counted as a login's: a stolen session guesses no faster here (its refusal is recorded above)
      if (
        !(await countedProof(
          ctx,
          account,
          principal.origin ?? {},
          () => verifyPassword(hash, lastPassword),
          async () => {},
        ))
      ) {
        throw wrong();
      }
      if (isVoidTemporaryPassword(account)) throw voidTemporaryPassword();
      await assertAcceptablePassword(
        newPassword,
        { userName: account.userName, currentHash: hash },
        ctx.passwordPolicy,
      );
      const now = ctx.clock();
      const passwordHash = await hashPassword(newPassword);
      await ctx.store.db.transaction().execute(async (trx) => {
        await saveCredential(trx, account.id, { passwordHash, firstLogin: false }, now);
        const ended = await revokeUserSessions(trx, account.id, now, principal.sessionId);
        // spec 1.1: a password change ends the account's API tokens too
        const tokensRevoked = await revokeUserApiTokens(trx, account.id, now);
        await audit(ctx, trx, { ...record, details: { sessionsEnded: ended, tokensRevoked } });
      });
    },
  );
}

/** Clears the failed-login back-off (admin, and support on ordinary users). */
export async function unlock(ctx: ServiceContext, principal: Principal, employeeId: string): Promise<void> {
  const account = await findAccountById(ctx.store.db, employeeId);
  if (!account) throw new ProblemError("not_found", `No employee with id ${employeeId}.`);
  const record = { action: "unlock" as const, target: userTarget(account) };
  await refusalsRecorded(
    ctx,
    (error) =>
      error.code === "forbidden" ? { ...record, actor: actorOf(principal), origin: principal.origin } : undefined,
    async () => assertCan(principal, "unlock", "User", { id: account.id, roles: account.roles }),
  );
  await ctx.store.db.transaction().execute(async (trx) => {
    await saveCredential(trx, account.id, { failedLogins: 0, lockedUntil: null }, ctx.clock());
    await auditBy(ctx, trx, principal, record);
  });
  await forgetNameFailures(ctx, account.userName);
}

/** Clears what the counter store holds of a name (its failures from before it held an account). */
export async function forgetNameFailures(ctx: ServiceContext, userName: string): Promise<void> {
  await ctx.nameFailures.clear(nameKey(userName));
}
