import type { Kysely } from "kysely";
import { ProblemError } from "../problem-error.js";
import type { Failures } from "../store/name-failures.js";
import type { Schema } from "../store/schema.js";
import { findAccountByUserName, replacePasswordHash, saveCredential, type UserAccount } from "../store/users-repo.js";
import { audit, userTarget } from "./audit.js";
import { isVoidTemporaryPassword } from "./issued-credentials.js";
import { current, lockedUntil, nameKey } from "./login-backoff.js";
import { burnVerification, hashPassword, needsRehash, verifyPassword } from "./passwords.js";
import type { RequestOrigin, ServiceContext } from "./service-context.js";

function invalidCredentials(): ProblemError {
  return new ProblemError("invalid_credentials", "The user name or password is wrong.");
}

/** Told only to someone who typed the right temporary password: the holder, or the staff member who set it. */
export function voidTemporaryPassword(): ProblemError {
  return new ProblemError(
    "invalid_credentials",
    "This temporary password was set by support staff, and the account now holds the admin or support role, for which only an admin may set one: ask an admin for a new temporary password or an invitation.",
  );
}

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
    await countFailure(ctx, account, origin, (trx) => failed("invalid_credentials", trx));
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

/**
 * Counts a failed proof on an account that can log in (a wrong password, a wrong one-time code)
 * toward its back-off, with the record of the failure (`record`, written in the same transaction)
 * and, when this failure starts a back-off, the record of that.
 */
export async function countFailure(
  ctx: ServiceContext,
  account: UserAccount,
  origin: RequestOrigin,
  record: (trx: Kysely<Schema>) => Promise<void>,
): Promise<void> {
  const now = ctx.clock().getTime();
  const failures = { count: current(accountFailures(account), now).count + 1, lastAt: now };
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
    await record(trx);
    if (lock) await recordLockout(ctx, trx, origin, failures, account);
  });
}

/**
 * Refuses (429 `account_locked`) while the account backs off: where a signed-in user proves a
 * one-time code, so that a stolen session cannot guess codes faster than a login could.
 */
export function assertNotBackedOff(ctx: ServiceContext, account: UserAccount): void {
  const now = ctx.clock().getTime();
  const until = lockedUntil(current(accountFailures(account), now));
  if (until > now) throw backedOff(until, now);
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
