import type { Kysely } from "kysely";
import { USER_NAME_PATTERN } from "../../contract/resources.js";
import type { Role } from "../../contract/route.js";
import { formatTimestamp } from "../http/timestamps.js";
import { invalid, ProblemError } from "../problem-error.js";
import { isUniqueViolation } from "../store/errors.js";
import type { Failures } from "../store/name-failures.js";
import { findUserByName, insertResource, type ResourceRow, replaceResource } from "../store/resources-repo.js";
import type { Schema } from "../store/schema.js";
import {
  createSession,
  endOldestLoginSessions,
  findLiveSession,
  pruneSessions,
  revokeSession,
  revokeUserSessions,
  touchSession,
} from "../store/sessions-repo.js";
import {
  countUsers,
  findAccountById,
  findAccountByUserName,
  lockAdminChanges,
  replacePasswordHash,
  roleNames,
  saveCredential,
  toAccount,
  type UserAccount,
} from "../store/users-repo.js";
import { actorOf, audit, auditBy, refusalsRecorded } from "./audit.js";
import { isVoidTemporaryPassword } from "./issued-credentials.js";
import { current, lockedUntil, nameKey } from "./login-backoff.js";
import { assertAcceptablePassword, burnVerification, hashPassword, needsRehash, verifyPassword } from "./passwords.js";
import { assertCan } from "./resource-policy.js";
import type { Principal, RequestOrigin, ServiceContext } from "./service-context.js";

function summary(account: UserAccount) {
  return {
    id: account.id,
    userName: account.userName,
    ...(account.displayName && { displayName: account.displayName }),
    roles: account.roles,
  };
}

function invalidCredentials(): ProblemError {
  return new ProblemError("invalid_credentials", "The user name or password is wrong.");
}

/** Told only to someone who typed the right temporary password: the holder, or the staff member who set it. */
function voidTemporaryPassword(): ProblemError {
  return new ProblemError(
    "invalid_credentials",
    "This temporary password was set by support staff, and the account now holds the admin or support role, for which only an admin may set one: ask an admin for a new temporary password or an invitation.",
  );
}

/** Where a login comes from, recorded on its session and in the audit trail. */
export type LoginClient = RequestOrigin;

const userTarget = (account: { id: string; userName: string }) => ({
  type: "User",
  id: account.id,
  name: account.userName,
});

/** A user agent is kept for a person to recognise a session, not in full. */
const USER_AGENT_MAX = 256;

/**
 * "Last used" is refreshed when it is older than this, so a busy session costs one write a
 * minute, not one per request (the session read on every request stays a read).
 */
export const SESSION_TOUCH_MS = 60_000;

/** The failures of an account that can log in, as its credentials row keeps them. */
const accountFailures = (account: UserAccount): Failures => ({
  count: account.credential.failedLogins,
  lastAt: account.credential.lastFailedAt ? Date.parse(account.credential.lastFailedAt) : 0,
});

function backedOff(until: number, now: number): ProblemError {
  const waitSeconds = Math.ceil((until - now) / 1000);
  return new ProblemError(
    "account_locked",
    `Too many failed logins for this name; try again in ${waitSeconds} s, or ask an admin to unlock the account.`,
    { headers: { "retry-after": String(waitSeconds) } },
  );
}

/**
 * The password check of every login, wherever it is typed (/auth/login, the OAuth authorization
 * page): the same answer for unknown and wrong, and the same back-off, by the name typed, for a
 * name that holds an account and for one that does not (services/login-backoff.ts).
 */
export async function checkPassword(
  ctx: ServiceContext,
  userName: string,
  password: string,
  origin: RequestOrigin = {},
  via = "login",
): Promise<UserAccount> {
  const key = nameKey(userName);
  // both looked up whatever the name, so that a refusal takes as long for any name
  const [found, nameState] = await Promise.all([
    findAccountByUserName(ctx.store.db, userName),
    ctx.nameFailures.get(key),
  ]);
  const account = found?.credential.passwordHash && found.active ? found : undefined;
  const now = ctx.clock().getTime();
  // the name typed is kept only when it names an account: people type passwords into that field
  const failed = (code: string, db = ctx.store.db) =>
    audit(ctx, db, {
      action: "login",
      outcome: code,
      origin,
      ...(found && { target: userTarget(found) }),
      details: { via },
    });
  const known = current(account ? accountFailures(account) : nameState, now);
  const until = Math.max(lockedUntil(known), lockedUntil(current(nameState, now)));
  if (until > now) {
    await failed("account_locked");
    throw backedOff(until, now);
  }
  if (!account) {
    // an unknown, disabled or password-less account costs the same time as a wrong password, and
    // its failures count as an account's do
    await burnVerification(password);
    const failures = await ctx.nameFailures.record(key, now);
    await failed("invalid_credentials");
    if (lockedUntil(failures) > 0) await recordLockout(ctx, ctx.store.db, origin, failures, found);
    throw invalidCredentials();
  }
  const hash = account.credential.passwordHash!;
  if (!(await verifyPassword(hash, password))) {
    const failures = { count: known.count + 1, lastAt: now };
    const lock = lockedUntil(failures);
    await ctx.store.db.transaction().execute(async (trx) => {
      await saveCredential(
        trx,
        account.id,
        {
          failedLogins: failures.count,
          lockedUntil: lock ? new Date(lock).toISOString() : null,
          failedAt: new Date(now),
        },
        ctx.clock(),
      );
      await failed("invalid_credentials", trx);
      if (lock) await recordLockout(ctx, trx, origin, failures, account);
    });
    throw invalidCredentials();
  }
  if (isVoidTemporaryPassword(account)) {
    await failed("invalid_credentials");
    throw voidTemporaryPassword();
  }
  // failures of the name from before it held this account end with its first success
  if (nameState.count > 0) await ctx.nameFailures.clear(key);
  // an imported bcrypt hash (or argon2id with weaker parameters) becomes ours now that the password is known
  if (await needsRehash(hash)) {
    await replacePasswordHash(ctx.store.db, account.id, { from: hash, to: await hashPassword(password) });
  }
  return account;
}

/** A name that just started backing off, in the audit trail (the account it names, if any). */
async function recordLockout(
  ctx: ServiceContext,
  db: Kysely<Schema>,
  origin: RequestOrigin,
  failures: Failures,
  account: UserAccount | undefined,
): Promise<void> {
  await audit(ctx, db, {
    action: "lockout",
    origin,
    ...(account && { target: userTarget(account) }),
    details: { failedLogins: failures.count, lockedUntil: new Date(lockedUntil(failures)).toISOString() },
  });
}

/** The success half of a login: the counters cleared and the login recorded, with `trx`. */
async function loggedIn(
  ctx: ServiceContext,
  trx: Kysely<Schema>,
  account: UserAccount,
  origin: RequestOrigin,
  via: string,
  details: Record<string, unknown> = {},
) {
  await saveCredential(trx, account.id, { failedLogins: 0, lockedUntil: null, loggedIn: true }, ctx.clock());
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
  await ctx.store.db.transaction().execute((trx) => loggedIn(ctx, trx, account, origin, via));
  return account;
}

export async function login(ctx: ServiceContext, userName: string, password: string, client: LoginClient = {}) {
  const account = await checkPassword(ctx, userName, password, client);
  const now = ctx.clock();
  const sessionId = crypto.randomUUID();
  const { token, expiresAt } = await ctx.keys.sign(
    { sub: account.id, jti: sessionId, roles: account.roles },
    ctx.tokenTtlSeconds,
  );
  await ctx.store.db.transaction().execute(async (trx) => {
    await loggedIn(ctx, trx, account, client, "login");
    // a cap on the sessions one user holds: the new one takes the place of the oldest
    const ended = await endOldestLoginSessions(trx, account.id, now, ctx.maxSessionsPerUser - 1);
    if (ended > 0) {
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
  return {
    token,
    tokenType: "Bearer" as const,
    expiresAt: formatTimestamp(expiresAt),
    firstLogin: account.credential.firstLogin,
    user: summary(account),
  };
}

/** Resolves a Bearer token to its caller; the revocation check is exact on every request. */
export async function authenticateBearer(ctx: ServiceContext, token: string): Promise<Principal> {
  const claims = await ctx.keys.verify(token);
  const row = await findLiveSession(ctx.store.db, claims.jti);
  if (!row || row.id !== claims.sub || row.revoked_at) {
    throw new ProblemError("token_revoked", "The session of this token has ended; log in again.");
  }
  const account = toAccount(row);
  if (!account.active) throw new ProblemError("token_revoked", "The account is disabled.");
  const now = ctx.clock().getTime();
  if (!row.last_used_at || now - Date.parse(row.last_used_at) >= SESSION_TOUCH_MS) {
    await touchSession(ctx.store.db, claims.jti, new Date(now));
  }
  return {
    userId: account.id,
    userName: account.userName,
    displayName: account.displayName,
    roles: account.roles,
    firstLogin: account.credential.firstLogin,
    sessionId: claims.jti,
    expiresAt: new Date(claims.exp * 1000),
  };
}

export async function logout(ctx: ServiceContext, principal: Principal): Promise<void> {
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
  };
}

const MAY_READ_OTHERS_FIRST_LOGIN: readonly Role[] = ["admin", "support"];

export async function isFirstLogin(ctx: ServiceContext, principal: Principal, employeeId?: string) {
  if (!employeeId || employeeId === principal.userId) {
    return { employeeId: principal.userId, firstLogin: principal.firstLogin };
  }
  if (!principal.roles.some((r) => MAY_READ_OTHERS_FIRST_LOGIN.includes(r))) {
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
      if (!account || !hash || !(await verifyPassword(hash, lastPassword))) {
        throw new ProblemError("invalid_credentials", "The current password is wrong.");
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
        await audit(ctx, trx, { ...record, details: { sessionsEnded: ended } });
      });
    },
  );
}

const USER_NAME = new RegExp(USER_NAME_PATTERN);

/** Refuses a userName holding control characters, with a message that says so rather than the pattern. */
export function assertUserName(userName: string): void {
  if (userName && !USER_NAME.test(userName)) {
    throw invalid(
      "A userName may not hold control characters (C0, DEL, C1) or bidi controls.",
      "/userName",
      "invalidValue",
    );
  }
}

/** What the HTML standard accepts as an e-mail address (input type=email): ASCII, no quoted parts. */
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** Refuses a User's e-mail that could never receive a link, naming the value's place. */
export function assertEmails(emails: unknown): void {
  if (!Array.isArray(emails)) return;
  emails.forEach((email, index) => {
    const value = (email as { value?: unknown })?.value;
    if (typeof value === "string" && !EMAIL.test(value)) {
      throw invalid(`emails[${index}].value is not an e-mail address.`, `/emails/${index}/value`, "invalidValue");
    }
  });
}

/**
 * The first admin of a new installation. Refused once any user exists, so that `server init`
 * cannot be used to take over a running deployment.
 */
export async function createFirstAdmin(
  ctx: ServiceContext,
  input: { userName: string; email?: string; password: string; temporary: boolean },
): Promise<{ id: string; userName: string }> {
  assertUserName(input.userName);
  assertEmails(input.email === undefined ? undefined : [{ value: input.email }]);
  if (!input.temporary) {
    await assertAcceptablePassword(input.password, { userName: input.userName }, ctx.passwordPolicy);
  }
  const passwordHash = await hashPassword(input.password);
  const now = ctx.clock();
  const row = newAdminRow(input, now);
  const usersExist = () =>
    new ProblemError("conflict", "Users already exist; server init only creates the first admin.");
  try {
    await ctx.store.db.transaction().execute(async (trx) => {
      // two inits at once: on PostgreSQL both would count no user and both insert (two admins, or
      // a unique violation for one name); the lock makes the second count after the first commits.
      // SQLite's transactions hold the write lock from their start already.
      await lockAdminChanges(trx, ctx.store.dialect);
      if ((await countUsers(trx)) > 0) throw usersExist();
      await insertResource(trx, row);
      await saveCredential(trx, row.id, { passwordHash, firstLogin: input.temporary, issuerRole: "admin" }, now);
      await audit(ctx, trx, {
        action: "user.create",
        target: { type: "User", id: row.id, name: input.userName },
        details: { via: "server init", roles: ["admin"], temporaryPassword: input.temporary },
      });
    });
  } catch (error) {
    // a user of that name made meanwhile by another path (recover-admin) is the same refusal
    if (isUniqueViolation(error)) throw usersExist();
    throw error;
  }
  return { id: row.id, userName: input.userName };
}

function newAdminRow(input: { userName: string; email?: string }, now: Date): ResourceRow {
  const attributes = {
    userName: input.userName,
    displayName: input.userName,
    active: true,
    roles: [{ value: "admin", primary: true }],
    ...(input.email && { emails: [{ value: input.email, type: "work", primary: true }] }),
  };
  return {
    id: crypto.randomUUID(),
    resource_type: "User",
    external_id: null,
    display_name: attributes.displayName,
    user_name_key: input.userName.toLowerCase(),
    attributes: JSON.stringify(attributes),
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    version: 1,
  };
}

/**
 * `server recover-admin`, the break-glass path: it runs where the database and the secret are,
 * not through the API. The named user becomes an active, unlocked admin whose password is the
 * given temporary one, its sessions ended; a name nobody holds becomes a new admin.
 */
export async function recoverAdmin(
  ctx: ServiceContext,
  input: { userName: string; email?: string; password: string },
): Promise<{ id: string; userName: string; created: boolean }> {
  assertUserName(input.userName);
  assertEmails(input.email === undefined ? undefined : [{ value: input.email }]);
  const passwordHash = await hashPassword(input.password);
  const now = ctx.clock();
  const recovered = await ctx.store.db.transaction().execute(async (trx) => {
    const current = await findUserByName(trx, input.userName);
    const credential = { passwordHash, firstLogin: true, failedLogins: 0, lockedUntil: null, issuerRole: "admin" };
    if (!current) {
      const row = newAdminRow(input, now);
      await insertResource(trx, row);
      await saveCredential(trx, row.id, credential, now);
      await audit(ctx, trx, {
        action: "user.recover_admin",
        target: { type: "User", id: row.id, name: input.userName },
        details: { via: "server recover-admin", created: true, temporaryPassword: true },
      });
      return { id: row.id, userName: input.userName, created: true };
    }
    const attributes = JSON.parse(current.attributes) as Record<string, unknown>;
    const roles = Array.isArray(attributes.roles) ? attributes.roles : [];
    const recovered = {
      ...attributes,
      active: true,
      roles: roleNames(attributes).includes("admin") ? roles : [...roles, { value: "admin" }],
    };
    const row = {
      ...current,
      attributes: JSON.stringify(recovered),
      updated_at: now.toISOString(),
      version: current.version + 1,
    };
    await replaceResource(trx, row, current.version);
    await saveCredential(trx, current.id, credential, now);
    await revokeUserSessions(trx, current.id, now);
    await audit(ctx, trx, {
      action: "user.recover_admin",
      target: { type: "User", id: current.id, name: String(attributes.userName) },
      details: { via: "server recover-admin", created: false, temporaryPassword: true },
    });
    return { id: current.id, userName: String(attributes.userName), created: false };
  });
  await forgetNameFailures(ctx, recovered.userName);
  return recovered;
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
