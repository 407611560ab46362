import type { Access } from "../route.js";
import type { Refusal, Subject } from "./decide.js";
import { DELEGATED_REFUSAL } from "./words.js";

/** What a route's gate knows of the caller beyond its roles: the state of its account. */
export interface GateSubject extends Subject {
  firstLogin?: boolean;
  /** the server requires a second factor of one of the caller's roles and the account has none */
  mfaEnrollmentRequired?: boolean;
}

const PASSWORD_CHANGE: Refusal = {
  code: "password_change_required",
  message: "Your password is temporary; change it first (POST /auth/ChangePassWithLastPass).",
};
const MFA_ENROLLMENT: Refusal = {
  code: "mfa_enrollment_required",
  message:
    "This server requires a second factor of your role: enroll one first (POST /auth/mfa/totp, then POST /auth/mfa/totp/verify).",
};
const DELEGATED: Refusal = { code: "forbidden", message: DELEGATED_REFUSAL };

/**
 * The rule of one route (its contract `access`), for every request it gets: a temporary password
 * first, then a second factor the server requires, a delegated credential on an account route, a
 * token's scopes (which narrow its owner's roles, never widen them), and last the roles. Built once
 * per route, so that a request allowed builds nothing; answers the first refusal met.
 */
export function routeGate(access: Exclude<Access, { public: true }>): (subject: GateSubject) => Refusal | undefined {
  const allowed = new Set<string>(access.roles);
  const duringFirstLogin = access.duringFirstLogin === true;
  const duringMfaEnrollment = access.duringMfaEnrollment === true;
  const managesAccount = access.managesAccount === true;
  const needed = access.roles.join(" or ");
  const scope = access.scope;
  const outOfScope: Refusal = {
    code: "forbidden",
    message:
      scope === undefined
        ? "An API token cannot call this operation; it needs the user's own login."
        : `This API token does not have the scope ${scope}.`,
  };
  return (subject) => {
    if (subject.firstLogin && !duringFirstLogin) return PASSWORD_CHANGE;
    // a temporary password comes first: the routes of a first login stay open to its holder
    if (subject.mfaEnrollmentRequired && !duringMfaEnrollment && !(subject.firstLogin && duringFirstLogin)) {
      return MFA_ENROLLMENT;
    }
    if (managesAccount && subject.delegated) return DELEGATED;
    if (subject.scopes && scope !== "any" && (scope === undefined || !subject.scopes.includes(scope))) {
      return outOfScope;
    }
    const roles = subject.roles;
    for (let i = 0; i < roles.length; i++) if (allowed.has(roles[i]!)) return undefined;
    // for a person at a help desk: who may, what the caller is, whom to ask
    return {
      code: "forbidden",
      message: `Only an account with the role ${needed} may do this, and yours is ${roles.join(" and ") || "without a role"}: ask an admin to do it, or to give you the role.`,
    };
  };
}
