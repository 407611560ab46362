import type { ErrorCode } from "../errors.js";
import { type ApiTokenScope, type Role, STAFF } from "../route.js";
import {
  ACCOUNT_ACTIONS,
  ACTION_WORDS,
  type Grant,
  nounOf,
  OPERATIONS,
  type OperationId,
  type OperationRule,
  type ResourceAction,
  resourceOperation,
} from "./operations.js";
import { DELEGATED_REFUSAL, GRANT_WORDS, ROLE_WORDS, rolesInWords, withWhomToAsk } from "./words.js";

/** Who asks: what a credential tells of its holder. A server principal is one, and so is what the CLI reads. */
export interface Subject {
  userId?: string;
  roles: readonly string[];
  /** an application acting for the user (OAuth token credentials) or an API token */
  delegated?: "oauth" | "apiToken";
  /** an API token's scopes; absent: not a token, or a token of every scope */
  scopes?: readonly ApiTokenScope[];
}

/** The account an operation is aimed at: its id, and the roles it holds now. */
export interface Target {
  id?: string;
  roles?: readonly string[];
}

/** One fact a decision rests on, in the order it was met. */
export interface Reason {
  rule: string;
  detail: string;
}

export interface Refusal {
  code: ErrorCode;
  message: string;
  hint?: string;
}

export interface Decision {
  allowed: boolean;
  operation: OperationId;
  reasons: Reason[];
  refusal?: Refusal;
}

/**
 * How a refusal names what was asked, for a caller that knows more than the operation: `about`
 * names the target ("alice", "users") and turns the refusal into "Only X may <verb> <about>";
 * `count` says how many users `about` names.
 */
export interface Words {
  verb?: string;
  noun?: string;
  about?: string;
  count?: number;
}

export interface DecideOptions {
  /**
   * whether the subject's token scopes count: the server's route gate checks them at every
   * request already, so the server's rules on a resource leave them out
   */
  scopes?: boolean;
  words?: Words;
}

/** The roles that make an account privileged: only an admin acts on such an account. */
export const isPrivileged = (roles: readonly string[] = []) =>
  roles.some((role) => (STAFF as readonly string[]).includes(role));

function grantApplies(subject: Subject, grant: Grant, target: Target): boolean {
  if (grant === "self") return target.id !== undefined && target.id === subject.userId;
  if (grant === "anyone:ordinary") return !isPrivileged(target.roles);
  if (grant === "support:ordinary") return subject.roles.includes("support") && !isPrivileged(target.roles);
  return subject.roles.includes(grant);
}

const grantsOf = (operation: OperationId): readonly Grant[] => OPERATIONS[operation].grants;

/** The grant that lets the subject's roles do it, without a word of why: for hot paths. */
const grantFor = (subject: Subject, operation: OperationId, target: Target) =>
  grantsOf(operation).find((grant) => grantApplies(subject, grant, target));

const delegatedRefused = (subject: Subject, rule: OperationRule, target: Target) =>
  subject.delegated !== undefined &&
  (rule.managesAccount === true ||
    (rule.managesOwnAccount === true && target.id !== undefined && target.id === subject.userId));

// an operation without a scope is no token's, as the route gate has it (gate.ts)
const outOfScope = (subject: Subject, rule: OperationRule, options: DecideOptions) =>
  options.scopes !== false &&
  subject.scopes !== undefined &&
  (rule.scope === undefined || !subject.scopes.includes(rule.scope));

/** Whether the subject may: `decide(...).allowed`, with nothing built to explain it. */
export function allows(subject: Subject, operation: OperationId, target: Target = {}, options: DecideOptions = {}) {
  const rule: OperationRule = OPERATIONS[operation];
  if (delegatedRefused(subject, rule, target) || outOfScope(subject, rule, options)) return false;
  return grantFor(subject, operation, target) !== undefined;
}

/** Whether one holder of `role` alone may (what a credential issued under that role is still worth). */
export const roleMay = (role: Role, operation: OperationId, target: Target) =>
  allows({ roles: [role] }, operation, target, { scopes: false });

const yoursOf = (roles: readonly string[]) =>
  roles.length > 0 ? `your account is ${roles.join(" and ")}` : "your account has no role";

/** Who may do it to this very target, in words: "an admin or support staff". */
function holdersFor(operation: OperationId, target: Target): string {
  const words: string[] = [];
  for (const grant of grantsOf(operation)) {
    if (grant === "self") continue;
    if (grant === "anyone:ordinary" || grant === "support:ordinary") {
      if (!isPrivileged(target.roles)) words.push(grant === "anyone:ordinary" ? "anyone" : ROLE_WORDS.support);
    } else words.push(ROLE_WORDS[grant]);
  }
  return words.join(" or ");
}

function refusalWords(subject: Subject, operation: OperationId, target: Target, words: Words): string {
  const rule: OperationRule = OPERATIONS[operation];
  const verb = words.verb ?? rule.verb;
  const yours = yoursOf(subject.roles);
  if (words.about !== undefined) {
    const holds = (words.count ?? 1) > 1 ? "who hold" : "who holds";
    const why = isPrivileged(target.roles) ? `, ${rule.privilegedWords ?? `${holds} the admin or support role`}` : "";
    return withWhomToAsk(`Only ${holdersFor(operation, target)} may ${verb} ${words.about}${why}`, yours);
  }
  const supportOnOrdinary = grantsOf(operation).includes("support:ordinary") && subject.roles.includes("support");
  if (supportOnOrdinary) {
    return `Support staff may ${verb} only users who hold neither the admin nor the support role; ask an admin.`;
  }
  const who = grantsOf(operation).map((grant) => GRANT_WORDS[grant]);
  return withWhomToAsk(`Only ${who.join(" or ")} may ${verb} ${words.noun ?? rule.noun}`, yours);
}

/**
 * Whether the subject may do the operation to the target, and the facts that say so: the
 * subject's roles, a delegated credential, a token's scopes, the grant that applies or the least
 * privilege rule that does not. A refusal carries the problem code and the sentence to show.
 */
export function decide(
  subject: Subject,
  operation: OperationId,
  target: Target = {},
  options: DecideOptions = {},
): Decision {
  const rule: OperationRule = OPERATIONS[operation];
  const reasons: Reason[] = [{ rule: "roles", detail: rolesInWords(subject.roles) }];
  const refused = (rule_: string, detail: string, message: string): Decision => {
    reasons.push({ rule: rule_, detail });
    return { allowed: false, operation, reasons, refusal: { code: "forbidden", message } };
  };
  if (delegatedRefused(subject, rule, target)) {
    return refused("delegated-credential", "a delegated credential never manages an account", DELEGATED_REFUSAL);
  }
  if (outOfScope(subject, rule, options)) {
    const scopes = subject.scopes?.join(", ") || "none";
    if (rule.scope === undefined) {
      const detail = `no API token scope covers it (the token's: ${scopes}): it needs the user's own login`;
      return refused("token-scope", detail, "An API token cannot call this operation; it needs the user's own login.");
    }
    const detail = `the API token's scopes (${scopes}) lack ${rule.scope}`;
    return refused("token-scope", detail, `This API token does not have the scope ${rule.scope}.`);
  }
  if (rule.scope && subject.scopes && options.scopes !== false) {
    reasons.push({ rule: "token-scope", detail: `the API token has the scope ${rule.scope}` });
  }
  const grant = grantFor(subject, operation, target);
  const verb = options.words?.verb ?? rule.verb;
  if (grant !== undefined) {
    reasons.push({ rule: "grant", detail: `${GRANT_WORDS[grant]} may ${verb} ${options.words?.noun ?? rule.noun}` });
    return { allowed: true, operation, reasons };
  }
  const leastPrivilege = isPrivileged(target.roles) && grantsOf(operation).some((g) => g.endsWith(":ordinary"));
  const [ruleName, detail] = leastPrivilege
    ? ["least-privilege", "the target holds admin or support, and only an admin acts on such an account"]
    : ["no-grant", `no role of the caller's may ${verb} ${rule.noun}`];
  return refused(ruleName, detail, refusalWords(subject, operation, target, options.words ?? {}));
}

/**
 * The rule of a /Resources request: the operation its action is on that type; what the caller may
 * not even read answers as absent (404), so that ids do not leak. Token scopes are the route's.
 */
export function decideOnResource(
  subject: Subject,
  action: ResourceAction,
  resourceType: string,
  target: Target = {},
): Decision {
  const operation = resourceOperation(resourceType, action);
  const read = resourceOperation(resourceType, "read") as OperationId;
  const options = { scopes: false, words: { noun: nounOf(resourceType) } };
  if (operation && allows(subject, operation, target, options)) return decide(subject, operation, target, options);
  if (action !== "create" && !allows(subject, read, target, options)) {
    return {
      allowed: false,
      operation: operation ?? read,
      reasons: [{ rule: "hidden", detail: "the caller may not read the target, so it is not found" }],
      refusal: { code: "not_found", message: `No resource with id ${target.id}.` },
    };
  }
  if (operation) return decide(subject, operation, target, options);
  // an action that no operation covers on this type (the roles of an OAuth consumer)
  const message =
    subject.delegated && ACCOUNT_ACTIONS.has(action)
      ? DELEGATED_REFUSAL
      : `No one may ${ACTION_WORDS[action]} ${nounOf(resourceType)}.`;
  return {
    allowed: false,
    operation: read,
    reasons: [{ rule: "no-grant", detail: message }],
    refusal: { code: "forbidden", message },
  };
}

/** Whether the subject may take the action on the resource: `decideOnResource(...).allowed` for hot paths. */
export function allowsOnResource(subject: Subject, action: ResourceAction, resourceType: string, target: Target = {}) {
  const operation = resourceOperation(resourceType, action);
  return operation !== undefined && allows(subject, operation, target, { scopes: false });
}
