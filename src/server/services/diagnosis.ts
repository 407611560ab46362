import { allows, type OperationId } from "../../contract/policy/index.js";
import { formatTimestamp } from "../http/timestamps.js";
import { ProblemError } from "../problem-error.js";
import { findAccountById, type UserAccount } from "../store/users-repo.js";
import { nameKey } from "./login-backoff.js";
import { EFFECTS, type Finding, LOGIN_CHECKS, type LoginFacts, type ReasonCode, readFacts } from "./login-checks.js";
import type { Principal, ServiceContext } from "./service-context.js";

// `users diagnose` (spec 1.11): the login's own checks (login-checks.ts) run over the account as it
// is now, every finding reported instead of the first acted on, each with what it means and the
// fix the caller may run (decided by the access policy, so support is never offered an admin's).

type Fix = { operation?: OperationId; command?: string; by?: "user"; text: string };

const quoted = (userName: string) => (/^[\w.@+-]+$/.test(userName) ? userName : `'${userName.replace(/'/g, "'\\''")}'`);

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/** What a finding means, for a person, and what fixes it. */
function explain(finding: Finding, account: UserAccount): { meaning: string; fix?: Fix } {
  const user = quoted(account.userName);
  const d = (finding.details ?? {}) as Record<string, unknown>;
  const newCredential: Fix = account.linkAddress
    ? { operation: "users:invite", command: `bizctl users invite ${user}`, text: "send a new invitation" }
    : {
        operation: "users:set-password",
        command: `bizctl users set-password ${user} --generate`,
        text: "give a temporary password (there is no e-mail address for an invitation)",
      };
  const texts: Record<ReasonCode, () => { meaning: string; fix?: Fix }> = {
    service_account: () => ({
      meaning:
        "A service account, not a person: it never logs in and has no password; it acts only through the API tokens an admin makes for it.",
      fix: {
        operation: "service-accounts:manage",
        command: `bizctl service-accounts token-create ${user}`,
        text: "make it an API token",
      },
    }),
    locked: () => ({
      meaning: `Too many failed logins (${String(d.failedLogins)}): every login is refused until the back-off ends, even with the right password.`,
      fix: { operation: "users:unlock", command: `bizctl users unlock ${user}`, text: "clear the back-off" },
    }),
    disabled: () => ({
      meaning: "The account is disabled: every login is refused, and its sessions and API tokens do not work.",
      fix: { operation: "users:set-active", command: `bizctl users enable ${user}`, text: "enable the account" },
    }),
    invitation_pending: () => ({
      meaning: "The user was invited and has not set a password through the link yet: no login works until they do.",
      fix: {
        operation: "users:invite",
        command: `bizctl users invite ${user}`,
        text: "if the mail was lost, send a new invitation (the old link stops working)",
      },
    }),
    invitation_expired: () => ({
      meaning: "The invitation expired before the user set a password: no login works.",
      fix: newCredential,
    }),
    no_password: () => ({
      meaning: "The account has no password and no invitation: no login works.",
      fix: newCredential,
    }),
    temporary_password_void: () => ({
      meaning:
        "The temporary password was set by support, and the account now holds admin or support, for which only an admin sets one: the login is refused.",
      fix: {
        operation: "users:set-password",
        command: `bizctl users set-password ${user} --generate`,
        text: "give a new temporary password",
      },
    }),
    second_factor_lost: () => ({
      meaning: `The user signed in with ${plural(Number(d.recoveryCodesUsed), "recovery code")} instead of the authenticator app, which is likely lost; ${plural(Number(d.recoveryCodesLeft), "code")} left${Number(d.recoveryCodesLeft) === 0 ? ": without the app no login works" : ""}.`,
      fix: {
        operation: "users:mfa-reset",
        command: `bizctl users mfa-reset ${user} --reason '...'`,
        text: "remove the second factor, so the user signs in with the password and enrolls again",
      },
    }),
    mfa_enrollment_required: () => ({
      meaning: `This server requires a second factor of the role ${String((d.requiredOf as string[]).join(", "))} and the user has none: a login may only enroll one.`,
      fix: { by: "user", command: "bizctl auth mfa enroll", text: "the user enrolls a factor after logging in" },
    }),
    temporary_password: () => ({
      meaning: "The password is temporary: a login may only change it.",
      fix: { by: "user", command: "bizctl auth change-password", text: "the user logs in and chooses a password" },
    }),
    session_cap: () => ({
      meaning: `The user holds ${String(d.openSessions)} sessions, the most allowed (${String(d.maxSessions)}): the next login ends the oldest.`,
      fix: {
        operation: "users:end-sessions",
        command: `bizctl users sign-out ${user}`,
        text: "end the sessions (only if they are not in use)",
      },
    }),
    no_email: () => ({
      meaning: "No e-mail address: a forgotten password cannot be reset with a link (renew-password sends nothing).",
      fix: {
        operation: "users:change-emails",
        command: `bizctl users update ${user} --set 'emails=[{"value":"ADDRESS","primary":true}]'`,
        text: "add an address",
      },
    }),
    reset_address_unconfirmed: () => ({
      meaning:
        "The e-mail address was set with an API token or an OAuth grant, and the user holds admin or support: no reset or invitation link is mailed there until an admin signed in confirms it.",
      fix: {
        operation: "users:change-emails",
        command: `bizctl users update ${user} --set 'emails=[{"value":"${account.linkAddress ?? "ADDRESS"}","primary":true}]'`,
        text: "confirm the address, signed in (not with a token)",
      },
    }),
  };
  return texts[finding.code]();
}

/** The fix as this caller is told it: a command only when the policy lets the caller run it. */
function offered(principal: Principal, account: UserAccount, fix: Fix) {
  if (fix.by === "user") return { by: "user" as const, command: fix.command, text: fix.text };
  const target = { id: account.id, roles: account.roles };
  if (fix.operation && allows(principal, fix.operation, target)) {
    return { by: "caller" as const, operation: fix.operation, command: fix.command, text: fix.text };
  }
  return { by: "admin" as const, operation: fix.operation, text: `ask an admin to ${fix.text}` };
}

/** States spec 1.11 names that this server has nothing to check for. */
const NOT_CHECKED = [
  { code: "deleted", why: "this server deletes a User at once: a deleted user is not found (404)" },
  { code: "password_expired", why: "this server has no maximum password age" },
];

/** Runs every check of the login's list, keeping each finding (one `locked`: the latest back-off). */
async function findAll(facts: LoginFacts) {
  const found: { finding: Finding; check: string }[] = [];
  for (const check of LOGIN_CHECKS) {
    const finding = await check.find(facts);
    if (!finding) continue;
    const same = found.find((f) => f.finding.code === finding.code);
    if (!same) found.push({ finding, check: check.name });
    else if ((finding.until ?? "") > (same.finding.until ?? "")) Object.assign(same, { finding, check: check.name });
  }
  return found;
}

export async function diagnoseUser(ctx: ServiceContext, principal: Principal, userId: string) {
  const account = await findAccountById(ctx.store.db, userId);
  if (!account) throw new ProblemError("not_found", `No user with id ${userId}.`);
  const nameFailures = await ctx.nameFailures.get(nameKey(account.userName));
  const facts = readFacts(ctx, ctx.store.db, account, nameFailures);
  const reasons = (await findAll(facts)).map(({ finding, check }) => {
    const { meaning, fix } = explain(finding, account);
    return {
      code: finding.code,
      effect: EFFECTS[finding.code],
      check,
      meaning,
      ...(finding.since && { since: formatTimestamp(new Date(finding.since)) }),
      ...(finding.until && { until: formatTimestamp(new Date(finding.until)) }),
      ...(finding.details && { details: finding.details }),
      ...(fix && { fix: offered(principal, account, fix) }),
    };
  });
  return {
    id: account.id,
    userName: account.userName,
    healthy: reasons.length === 0,
    checkedAt: formatTimestamp(new Date(facts.now)),
    reasons,
    checks: LOGIN_CHECKS.map((check) => check.name),
    notChecked: NOT_CHECKED,
  };
}
