import type { Kysely } from "kysely";
import { mayMailLinkTo } from "../../contract/policy/index.js";
import type { Role } from "../../contract/route.js";
import type { Failures } from "../store/name-failures.js";
import { latestUnusedInvitation } from "../store/reset-tokens-repo.js";
import type { Schema } from "../store/schema.js";
import { openLoginSessions } from "../store/sessions-repo.js";
import { findTotpFactor, recoveryCodeUse } from "../store/totp-repo.js";
import type { UserAccount } from "../store/users-repo.js";
import { isVoidTemporaryPassword } from "./issued-credentials.js";
import { current, lockedUntil } from "./login-backoff.js";

// The checks a login performs, by name and in the order a login meets them. The login runs them
// and acts on what they find (services/password-check.ts, accounts.ts); `users diagnose` runs the
// same list over the same facts and reports everything they find (services/diagnosis.ts). So the
// diagnosis cannot say anything the login would not do: it is the login's own code that answers.

/** The stable code of a reason a user cannot sign in or act (spec 1.11). */
export type ReasonCode =
  | "service_account"
  | "locked"
  | "disabled"
  | "invitation_pending"
  | "invitation_expired"
  | "no_password"
  | "temporary_password_void"
  | "second_factor_lost"
  | "mfa_enrollment_required"
  | "temporary_password"
  | "session_cap"
  | "no_email"
  | "reset_address_unconfirmed";

/**
 * Where a login meets a check: before the password is looked at (`account`), once it is right
 * (`password`), at the second factor (`factor`), as the session is made (`session`), and in the
 * forgot-password flow a user falls back on (`recovery`).
 */
export type LoginStage = "account" | "password" | "factor" | "session" | "recovery";

/** What a finding does to the user: the login is refused; it succeeds but may only do one thing; or a notice. */
export type Effect = "refused" | "restricted" | "notice";

export interface Finding {
  code: ReasonCode;
  /** ISO timestamps, when known */
  since?: string;
  until?: string;
  details?: Record<string, unknown>;
}

export interface FactorState {
  active: boolean;
  since?: string;
  recoveryCodesLeft: number;
  recoveryCodesUsed: number;
  firstRecoveryUsedAt?: string;
}

export interface InvitationState {
  createdAt: string;
  expiresAt: string;
}

/**
 * What the checks read of an account. A login has most of it at hand; the rest is read only when a
 * check asks for it (and once), so that a login pays for nothing it does not need.
 */
export interface LoginFacts {
  /** undefined: the name holds no account (only the name's back-off applies) */
  account: UserAccount | undefined;
  now: number;
  /** the failures the counter store holds for the name (services/login-backoff.ts) */
  nameFailures: Failures;
  requireMfaRoles: readonly Role[];
  maxSessions: number;
  invitation: () => Promise<InvitationState | undefined>;
  factor: () => Promise<FactorState>;
  /** the open login sessions, newest first */
  loginSessions: () => Promise<readonly { id: string; created_at: string }[]>;
}

export interface LoginCheck {
  /** the check's name, as the diagnosis lists what it ran */
  name: string;
  stage: LoginStage;
  find(facts: LoginFacts): Promise<Finding | undefined>;
}

/** What the checks need of the server's settings. */
export interface CheckSettings {
  clock: () => Date;
  requireMfaRoles: readonly Role[];
  maxSessionsPerUser: number;
}

/** The facts of an account as the database holds them now (`db`: a login's transaction, or the pool). */
export function readFacts(
  settings: CheckSettings,
  db: Kysely<Schema>,
  account: UserAccount | undefined,
  nameFailures: Failures,
): LoginFacts {
  const now = settings.clock();
  const id = account?.id ?? "";
  return {
    account,
    now: now.getTime(),
    nameFailures,
    requireMfaRoles: settings.requireMfaRoles,
    maxSessions: settings.maxSessionsPerUser,
    invitation: once(async () => {
      const row = await latestUnusedInvitation(db, id);
      return row && { createdAt: row.created_at, expiresAt: row.expires_at };
    }),
    factor: once(async () => {
      const factor = await findTotpFactor(db, id);
      if (!factor?.enabled_at) return { active: false, recoveryCodesLeft: 0, recoveryCodesUsed: 0 };
      const use = await recoveryCodeUse(db, id);
      return {
        active: true,
        since: factor.enabled_at,
        recoveryCodesLeft: use.left,
        recoveryCodesUsed: use.used,
        ...(use.firstUsedAt && { firstRecoveryUsedAt: use.firstUsedAt }),
      };
    }),
    loginSessions: once(() => openLoginSessions(db, id, now)),
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Whether the server requires a second factor of a holder of any of `roles` (`--require-mfa`). */
export const requiresFactor = (requireMfaRoles: readonly Role[], roles: readonly Role[]) =>
  roles.some((role) => requireMfaRoles.includes(role));

/** Remembers a loader's answer: a fact is read once however many checks ask. */
export function once<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= load();
    return value;
  };
}

/** The `locked` finding of a back-off, the name's or the account's: none once it has ended. */
function lockedFinding(failures: Failures, now: number): Finding | undefined {
  const counted = current(failures, now);
  const until = lockedUntil(counted);
  if (until <= now) return undefined;
  return { code: "locked", since: iso(counted.lastAt), until: iso(until), details: { failedLogins: counted.count } };
}

export const LOGIN_CHECKS: readonly LoginCheck[] = [
  {
    // not a person (spec 1.9): no password to guess, so the login says what the account is, first
    name: "person",
    stage: "account",
    async find({ account }) {
      return account?.serviceAccount ? { code: "service_account" } : undefined;
    },
  },
  {
    // failures typed at the name while it held no account that can log in (unknown, disabled, no password)
    name: "name-backoff",
    stage: "account",
    async find({ nameFailures, now }) {
      return lockedFinding(nameFailures, now);
    },
  },
  {
    name: "enabled",
    stage: "account",
    async find({ account }) {
      return account && !account.active ? { code: "disabled" } : undefined;
    },
  },
  {
    name: "password-set",
    stage: "account",
    async find({ account, invitation, now }) {
      if (!account || account.serviceAccount || account.credential.passwordHash) return undefined;
      const invited = await invitation();
      if (!invited) return { code: "no_password" };
      return Date.parse(invited.expiresAt) > now
        ? { code: "invitation_pending", since: invited.createdAt, until: invited.expiresAt }
        : { code: "invitation_expired", since: invited.expiresAt };
    },
  },
  {
    // the account's own count (its credentials row), as countedProof() reads it before a proof
    name: "account-backoff",
    stage: "account",
    async find({ account, now }) {
      if (!account?.credential.passwordHash || !account.active) return undefined;
      const { failedLogins, lastFailedAt } = account.credential;
      return lockedFinding({ count: failedLogins, lastAt: lastFailedAt ? Date.parse(lastFailedAt) : 0 }, now);
    },
  },
  {
    // a temporary password whose issuer may no longer give it (credentials follow their issuer's privilege)
    name: "issuer-privilege",
    stage: "password",
    async find({ account }) {
      if (!account || !isVoidTemporaryPassword(account)) return undefined;
      return {
        code: "temporary_password_void",
        ...(account.credential.passwordChangedAt && { since: account.credential.passwordChangedAt }),
        details: { issuerRole: account.credential.issuerRole },
      };
    },
  },
  {
    // a login with a factor asks for a code; recovery codes spent say the device is likely gone
    name: "second-factor",
    stage: "factor",
    async find({ account, factor }) {
      if (!account) return undefined;
      const state = await factor();
      if (!state.active || state.recoveryCodesUsed === 0) return undefined;
      return {
        code: "second_factor_lost",
        ...(state.firstRecoveryUsedAt && { since: state.firstRecoveryUsedAt }),
        details: { recoveryCodesLeft: state.recoveryCodesLeft, recoveryCodesUsed: state.recoveryCodesUsed },
      };
    },
  },
  {
    name: "factor-enrollment",
    stage: "session",
    async find({ account, factor, requireMfaRoles }) {
      if (!account || !requiresFactor(requireMfaRoles, account.roles)) return undefined;
      if ((await factor()).active) return undefined;
      return {
        code: "mfa_enrollment_required",
        details: { requiredOf: account.roles.filter((role) => requireMfaRoles.includes(role)) },
      };
    },
  },
  {
    name: "first-login",
    stage: "session",
    async find({ account }) {
      if (!account?.credential.passwordHash || !account.credential.firstLogin) return undefined;
      if (isVoidTemporaryPassword(account)) return undefined;
      return {
        code: "temporary_password",
        ...(account.credential.passwordChangedAt && { since: account.credential.passwordChangedAt }),
        ...(account.credential.issuerRole && { details: { setBy: account.credential.issuerRole } }),
      };
    },
  },
  {
    // the cap on one user's sessions: a new login ends the oldest
    name: "session-cap",
    stage: "session",
    async find({ account, loginSessions, maxSessions }) {
      if (!account) return undefined;
      const open = await loginSessions();
      if (open.length < maxSessions) return undefined;
      return {
        code: "session_cap",
        since: open[maxSessions - 1]!.created_at,
        details: { openSessions: open.length, maxSessions, endedByNextLogin: open.length - (maxSessions - 1) },
      };
    },
  },
  {
    // the forgot-password flow mails a link to this address (link-mails.ts recipient()); none, no link
    name: "reset-address",
    stage: "recovery",
    async find({ account }) {
      if (!account || account.serviceAccount) return undefined;
      if (!account.linkAddress) return { code: "no_email" };
      const state = { roles: account.roles, addressesByDelegate: account.credential.addressesByDelegate };
      return mayMailLinkTo(state) ? undefined : { code: "reset_address_unconfirmed" };
    },
  },
];

/** What each reason does to the user. */
export const EFFECTS: Record<ReasonCode, Effect> = {
  service_account: "refused",
  locked: "refused",
  disabled: "refused",
  invitation_pending: "refused",
  invitation_expired: "refused",
  no_password: "refused",
  temporary_password_void: "refused",
  second_factor_lost: "notice",
  mfa_enrollment_required: "restricted",
  temporary_password: "restricted",
  session_cap: "notice",
  no_email: "notice",
  reset_address_unconfirmed: "notice",
};

/** The findings of one stage's checks, in order. */
export async function runStage(facts: LoginFacts, stage: LoginStage): Promise<Finding[]> {
  const found: Finding[] = [];
  for (const check of LOGIN_CHECKS) {
    if (check.stage !== stage) continue;
    const finding = await check.find(facts);
    if (finding) found.push(finding);
  }
  return found;
}

/** The first finding of a stage: what a login meets first and acts on. */
export async function firstFinding(facts: LoginFacts, stage: LoginStage): Promise<Finding | undefined> {
  for (const check of LOGIN_CHECKS) {
    if (check.stage !== stage) continue;
    const finding = await check.find(facts);
    if (finding) return finding;
  }
  return undefined;
}
