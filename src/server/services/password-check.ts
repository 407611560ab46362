import type { Kysely } from "kysely";
import { ProblemError } from "../problem-error.js";
import type { Failures } from "../store/name-failures.js";
import { dropOneFailure, readFailures, replaceFailures, type StoredFailures } from "../store/proof-failures-repo.js";
import type { Schema } from "../store/schema.js";
import { findAccountByUserName, replacePasswordHash, type UserAccount } from "../store/users-repo.js";
import { audit, userTarget } from "./audit.js";
import { BACK_OFF, current, lockedUntil, nameKey } from "./login-backoff.js";
import { firstFinding, readFacts } from "./login-checks.js";
import { burnVerification, hashPassword, needsRehash, verifyPassword } from "./passwords.js";
import { serviceAccountRefusal } from "./service-account-rules.js";
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
  // the login's checks (services/login-checks.ts), which `users diagnose` runs too
  const facts = readFacts(ctx, ctx.store.db, found, nameState);
  const now = facts.now;
  // the name typed is kept only when it names an account: people type passwords into that field;
  // the reason is the check that refused, as `users diagnose` names it
  const failed = (code: string, reason?: string, db = ctx.store.db) =>
    audit(ctx, db, {
      action: "login",
      outcome: code,
      origin,
      ...(found && { target: userTarget(found) }),
      details: { via, ...(reason && { reason }) },
    });
  const refusal = await firstFinding(facts, "account");
  if (found && refusal?.code === "service_account") {
    await failed("service_account");
    throw serviceAccountRefusal(found.userName, "log in");
  }
  if (refusal?.code === "locked") {
    await failed("account_locked", refusal.code);
    throw backedOff(Date.parse(refusal.until!), now);
  }
  if (!found || refusal) {
    // an unknown, disabled or password-less account costs the same time as a wrong password, and
    // its failures count as an account's do
    // counted before the check, as an account's proof is (countedProof), so that a burst backs off alike
    const reserved = await ctx.nameFailures.reserve(key, now, BACK_OFF);
    if ("until" in reserved) {
      await failed("account_locked", "locked");
      throw backedOff(reserved.until, now);
    }
    await burnVerification(password);
    await failed("invalid_credentials", refusal?.code);
    if (lockedUntil(reserved.counted) > 0) await recordLockout(ctx, ctx.store.db, origin, reserved.counted, found);
    throw invalidCredentials();
  }
  const account = found;
  const hash = account.credential.passwordHash!;
  const right = await countedProof(
    ctx,
    account,
    origin,
    () => verifyPassword(hash, password),
    (trx) => failed("invalid_credentials", undefined, trx),
    () => failed("account_locked", "locked"),
  );
  if (!right) throw invalidCredentials();
  const voided = await firstFinding(facts, "password");
  if (voided) {
    await failed("invalid_credentials", voided.code);
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

/** The failures of a credentials row as the back-off reads them. */
const failuresOf = (stored: StoredFailures): Failures => ({
  count: stored.failedLogins,
  lastAt: stored.lastFailedAt ? Date.parse(stored.lastFailedAt) : 0,
});

const NONE: StoredFailures = { failedLogins: 0, lastFailedAt: null, lockedUntil: null };

type Reservation = { prior: StoredFailures; mine: StoredFailures; failures: Failures };

/**
 * Counts a proof as failed before it is checked, unless the account backs off (then `until`):
 * decided from the state the account was read with and written only if the database still holds
 * it (else read again and decided anew), so that proofs checked at the same time on any instance
 * each count, and those past the threshold are refused unchecked.
 */
async function reserve(
  ctx: ServiceContext,
  account: UserAccount,
): Promise<Reservation | { until: number; now: number }> {
  let seen: StoredFailures | undefined = account.credential;
  for (;;) {
    const now = ctx.clock();
    const known = current(failuresOf(seen ?? NONE), now.getTime());
    const until = lockedUntil(known);
    if (until > now.getTime()) return { until, now: now.getTime() };
    const failures = { count: known.count + 1, lastAt: now.getTime() };
    const lock = lockedUntil(failures);
    const mine = {
      failedLogins: failures.count,
      lastFailedAt: now.toISOString(),
      lockedUntil: lock ? new Date(lock).toISOString() : null,
    };
    // an account without a credentials row has nothing to count in
    if (!seen || (await replaceFailures(ctx.store.db, account.id, seen, mine, now))) {
      return { prior: seen ?? NONE, mine, failures };
    }
    seen = await readFailures(ctx.store.db, account.id);
  }
}

/**
 * Takes back the failure a proof that held counted: the state from before it when no other proof
 * was counted since, or else one failure fewer (the others, and the back-off they started, stay).
 * The account is left with the state, which a login's success clears only if it is still the
 * database's (accounts.ts).
 */
async function release(ctx: ServiceContext, account: UserAccount, reserved: Reservation): Promise<void> {
  const now = ctx.clock();
  const left = (await replaceFailures(ctx.store.db, account.id, reserved.mine, reserved.prior, now))
    ? reserved.prior
    : await dropOneFailure(ctx.store.db, account.id, now);
  if (left) account.credential = { ...account.credential, ...left };
}

/**
 * Checks a proof (a password, a one-time code) of an account that can log in, counted toward its
 * back-off however many are checked at once: counted before `check` runs (refused with 429
 * `account_locked` while the account backs off, after `locked`), taken back when `check` answers
 * a truthy value or throws; for a falsy answer, the record of the failure (`failed`, written in
 * one transaction) and, when this failure starts a back-off, the record of that.
 */
export async function countedProof<T>(
  ctx: ServiceContext,
  account: UserAccount,
  origin: RequestOrigin,
  check: () => Promise<T>,
  failed: (trx: Kysely<Schema>) => Promise<void>,
  locked?: () => Promise<void>,
): Promise<T> {
  const reserved = await reserve(ctx, account);
  if ("until" in reserved) {
    await locked?.();
    throw backedOff(reserved.until, reserved.now);
  }
  let result: T;
  try {
    result = await check();
  } catch (error) {
    await release(ctx, account, reserved);
    throw error;
  }
  if (result) {
    await release(ctx, account, reserved);
    return result;
  }
  await ctx.store.db.transaction().execute(async (trx) => {
    await failed(trx);
    if (lockedUntil(reserved.failures) > 0) await recordLockout(ctx, trx, origin, reserved.failures, account);
  });
  return result;
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
