import { createHash, randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { formatTimestamp } from "../http/timestamps.js";
import { ProblemError } from "../problem-error.js";
import type { Schema } from "../store/schema.js";
import {
  acceptTotpStep,
  consumeRecoveryCode,
  countUnusedRecoveryCodes,
  deleteTotpFactor,
  findTotpFactor,
  insertRecoveryCodes,
  savePendingTotpFactor,
  type TotpFactorRow,
} from "../store/totp-repo.js";
import { findAccountById, type UserAccount } from "../store/users-repo.js";
import { type AuditAction, type AuditEntry, actorOf, audit, auditBy, refusalsRecorded, userTarget } from "./audit.js";
import { countedProof } from "./password-check.js";
import { verifyPassword } from "./passwords.js";
import type { Principal, RequestOrigin, ServiceContext } from "./service-context.js";
import { matchTotp, newTotpSecret, totpUri } from "./totp.js";

// A user's TOTP second factor (spec 1.7): enrollment, activation with recovery codes, status,
// removal, and the proof a login asks of an enrolled user. No seed or code ever reaches an audit
// record, a log line or a problem's detail.

export const RECOVERY_CODE_COUNT = 10;

/** How a one-time code was proved: a TOTP code, or a recovery code (spent). */
export type Proof = "totp" | "recovery";

/** The additional data a seed is sealed with: a sealed seed copied to another user's row does not open. */
const sealContext = (userId: string) => `totp:${userId}`;

function openSeed(ctx: ServiceContext, factor: TotpFactorRow): string {
  const seed = ctx.sealer.unseal(factor.sealed_secret, sealContext(factor.user_id));
  if (seed === undefined) {
    throw new ProblemError(
      "service_unavailable",
      "The server cannot open this account's second factor: it runs with another secret key than the one that sealed it.",
    );
  }
  return seed;
}

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/** A recovery code: 80 random bits as 16 base32 letters, grouped by four for a person to type. */
function newRecoveryCode(): string {
  const bytes = randomBytes(10);
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out.match(/.{4}/g)!.join("-");
}

/** A code as typed: case, spaces and dashes do not matter. */
const normalizeCode = (code: string) => code.replace(/[\s-]/g, "").toLowerCase();

/**
 * The stored form of a recovery code. A fast hash suffices here, unlike for passwords: a code
 * holds 80 random bits, so no dictionary helps and trying 2^80 digests of a stolen database is out
 * of reach however fast each one is; a slow hash would only slow every login that uses one. The
 * user id is hashed in, so equal digests never name two accounts.
 */
const hashRecoveryCode = (userId: string, code: string) =>
  createHash("sha256")
    .update(`totp-recovery\n${userId}\n${normalizeCode(code)}`)
    .digest("hex");

/**
 * Proves `code` against the factor: a TOTP code of the current step or one either side, later
 * than the last one accepted (recorded now, so it is good once), or, on an active factor, an
 * unused recovery code (spent now). Undefined when it is neither.
 */
async function prove(
  ctx: ServiceContext,
  db: Kysely<Schema>,
  factor: TotpFactorRow,
  code: string,
  enable?: { at: Date },
): Promise<Proof | undefined> {
  const typed = normalizeCode(code);
  const now = ctx.clock();
  if (/^\d{6}$/.test(typed)) {
    const step = matchTotp(openSeed(ctx, factor), typed, now.getTime(), factor.last_step ?? undefined);
    // the conditional write decides between two requests racing with one code
    return step !== undefined && (await acceptTotpStep(db, factor.user_id, step, enable)) ? "totp" : undefined;
  }
  if (!factor.enabled_at || !/^[a-z2-7]{16}$/.test(typed)) return undefined;
  return (await consumeRecoveryCode(db, factor.user_id, hashRecoveryCode(factor.user_id, typed), now))
    ? "recovery"
    : undefined;
}

const invalidOtp = () => new ProblemError("invalid_otp", "The one-time code is wrong, expired or already used.");

async function ownAccount(ctx: ServiceContext, principal: Principal): Promise<UserAccount> {
  const account = await findAccountById(ctx.store.db, principal.userId);
  if (!account) throw new ProblemError("token_revoked", "The account no longer exists.");
  return account;
}

/** Starts (or restarts, while pending) an enrollment: a new seed, answered once with its key URI. */
export async function startTotpEnrollment(ctx: ServiceContext, principal: Principal) {
  const secret = newTotpSecret();
  const record = ownRecord(principal, "mfa.enroll");
  await refusalsRecorded(
    ctx,
    (error) => (error.code === "conflict" ? record : undefined),
    () =>
      ctx.store.db.transaction().execute(async (trx) => {
        const saved = await savePendingTotpFactor(trx, {
          userId: principal.userId,
          sealedSecret: ctx.sealer.seal(secret, sealContext(principal.userId)),
          createdAt: ctx.clock(),
        });
        if (!saved) {
          throw new ProblemError(
            "conflict",
            "A second factor is already active on this account; remove it (`bizctl auth mfa disable`, or DELETE /auth/mfa/totp) before enrolling another.",
          );
        }
        await audit(ctx, trx, record);
      }),
  );
  return { secret, uri: totpUri(principal.userName, secret) };
}

/** Activates a pending enrollment with a first code; answers the recovery codes, this once. */
export async function activateTotp(ctx: ServiceContext, principal: Principal, code: string) {
  const record = ownRecord(principal, "mfa.activate");
  return refusalsRecorded(
    ctx,
    (error) => (["conflict", "not_found", "account_locked"].includes(error.code) ? record : undefined),
    async () => {
      const account = await ownAccount(ctx, principal);
      const factor = await findTotpFactor(ctx.store.db, principal.userId);
      if (!factor) {
        throw new ProblemError("not_found", "No enrollment is pending; start one with POST /auth/mfa/totp.");
      }
      if (factor.enabled_at) throw new ProblemError("conflict", "The second factor is already active.");
      const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
      const now = ctx.clock();
      const activated = await countedProof(
        ctx,
        account,
        principal.origin ?? {},
        () =>
          ctx.store.db.transaction().execute(async (trx) => {
            if (!(await prove(ctx, trx, factor, code, { at: now }))) return false;
            await insertRecoveryCodes(
              trx,
              principal.userId,
              codes.map((c) => hashRecoveryCode(principal.userId, c)),
              now,
            );
            await audit(ctx, trx, { ...record, details: { recoveryCodes: codes.length } });
            return true;
          }),
        (trx) => audit(ctx, trx, { ...record, outcome: "invalid_otp" }),
      );
      if (!activated) throw invalidOtp();
      return { enabled: true as const, since: formatTimestamp(now), recoveryCodes: codes };
    },
  );
}

/** Whether the caller has an active factor, since when, and how many recovery codes are left. */
export async function totpStatus(ctx: ServiceContext, principal: Principal) {
  const factor = await findTotpFactor(ctx.store.db, principal.userId);
  if (!factor?.enabled_at) return { enabled: false, pending: factor !== undefined };
  return {
    enabled: true,
    pending: false,
    since: formatTimestamp(new Date(factor.enabled_at)),
    recoveryCodesLeft: await countUnusedRecoveryCodes(ctx.store.db, principal.userId),
  };
}

/** Removes the caller's factor (active or pending) and its recovery codes: the password and a code prove it. */
export async function removeTotp(ctx: ServiceContext, principal: Principal, password: string, code: string) {
  const record = ownRecord(principal, "mfa.remove");
  const origin: RequestOrigin = principal.origin ?? {};
  await refusalsRecorded(
    ctx,
    (error) => (["not_found", "account_locked"].includes(error.code) ? record : undefined),
    async () => {
      const account = await ownAccount(ctx, principal);
      const factor = await findTotpFactor(ctx.store.db, principal.userId);
      if (!factor) throw new ProblemError("not_found", "This account has no second factor.");
      const hash = account.credential.passwordHash;
      const right = await countedProof(
        ctx,
        account,
        origin,
        async () => !!hash && (await verifyPassword(hash, password)),
        (trx) => audit(ctx, trx, { ...record, outcome: "invalid_credentials" }),
      );
      if (!right) throw new ProblemError("invalid_credentials", "The password is wrong.");
      const removed = await countedProof(
        ctx,
        account,
        origin,
        () =>
          ctx.store.db.transaction().execute(async (trx) => {
            const proof = await prove(ctx, trx, factor, code);
            if (!proof) return false;
            await deleteTotpFactor(trx, principal.userId);
            await auditBy(ctx, trx, principal, {
              action: "mfa.remove",
              target: userTarget(account),
              details: { proof },
            });
            return true;
          }),
        (trx) => audit(ctx, trx, { ...record, outcome: "invalid_otp" }),
      );
      if (!removed) throw invalidOtp();
    },
  );
}

/**
 * The second step of a login whose password was right: nothing for an account without an active
 * factor; otherwise `otp` must prove it (401 `mfa_required` without one, 401 `invalid_otp`,
 * counted toward the back-off as a wrong password is, for a wrong one). The few reads and one
 * HMAC it adds are small beside the password hash every refusal of 1.1 costs.
 */
export async function proveLoginFactor(
  ctx: ServiceContext,
  account: UserAccount,
  otp: string | undefined,
  origin: RequestOrigin,
  via: string,
): Promise<Proof | undefined> {
  const factor = await findTotpFactor(ctx.store.db, account.id);
  if (!factor?.enabled_at) return undefined;
  const failed = (outcome: string) => (db: Kysely<Schema>) =>
    audit(ctx, db, { action: "login", outcome, origin, target: userTarget(account), details: { via } });
  if (otp === undefined || otp === "") {
    await failed("mfa_required")(ctx.store.db);
    throw new ProblemError(
      "mfa_required",
      "This account has a second factor: send the code of your authenticator app (or a recovery code) as otp.",
    );
  }
  const proof = await countedProof(
    ctx,
    account,
    origin,
    () => prove(ctx, ctx.store.db, factor, otp),
    failed("invalid_otp"),
    () => failed("account_locked")(ctx.store.db),
  );
  if (!proof) throw invalidOtp();
  return proof;
}

/** Whether an account has an active second factor (a page that cannot ask for a code refuses it). */
export async function hasActiveFactor(ctx: ServiceContext, userId: string): Promise<boolean> {
  return !!(await findTotpFactor(ctx.store.db, userId))?.enabled_at;
}

/** The audit record of a change a user makes to its own second factor. */
function ownRecord(principal: Principal, action: AuditAction): AuditEntry {
  return {
    action,
    actor: actorOf(principal),
    origin: principal.origin,
    target: userTarget({ id: principal.userId, userName: principal.userName }),
  };
}
