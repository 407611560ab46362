import { type RawBuilder, sql } from "kysely";
import { EVERYONE, type Role, STAFF } from "../../contract/route.js";
import { ProblemError } from "../problem-error.js";
import type { Principal } from "./service-context.js";

export type ResourceKind = "User" | "OAuthConsumer" | "custom";
export type ResourceAction =
  | "read"
  | "create"
  | "update"
  | "delete"
  | "changeRoles"
  | "setPassword"
  | "setActive"
  | "unlock"
  | "endSessions"
  | "invite"
  | "resetSecondFactor"
  | "readAccountState"
  | "changeEmails";

/**
 * Who a grant lets act: a role on any target; `self` on the caller's own User; `support:ordinary`
 * support on Users who hold neither admin nor support (help-desk least privilege: otherwise a
 * support account could set an admin's password and log in as that admin).
 */
type Grant = Role | "self" | "support:ordinary";

/** The roles that make a User privileged: only admins may act on such an account. */
const PRIVILEGED: readonly Role[] = STAFF;

/** The resource an action is aimed at: its id, and for a User the roles it holds now. */
export interface Target {
  id?: string;
  roles?: readonly Role[];
}

export function kindOf(resourceType: string): ResourceKind {
  return resourceType === "User" || resourceType === "OAuthConsumer" ? resourceType : "custom";
}

const NONE: readonly Grant[] = [];

/**
 * The roles table of the specification for resources, in one place. Route-level access (who may
 * call an operation at all) lives in the contract.
 */
const POLICY: Record<ResourceKind, Record<ResourceAction, readonly Grant[]>> = {
  User: {
    read: ["admin", "support", "self"],
    create: ["admin"],
    update: ["admin"],
    delete: ["admin"],
    changeRoles: ["admin"],
    setPassword: ["admin", "support:ordinary"],
    setActive: ["admin", "support:ordinary"],
    unlock: ["admin", "support:ordinary"],
    endSessions: ["admin", "support:ordinary"],
    // an invitation lets its holder set the first password: as much as setting a temporary one
    invite: ["admin", "support:ordinary"],
    // a reset lets whoever holds the password in without a code: as much as setting a password
    resetSecondFactor: ["admin", "support:ordinary"],
    readAccountState: STAFF,
    // the addresses a reset or invitation link goes to: an account fact (see OWN_ACCOUNT_ACTIONS)
    changeEmails: ["admin"],
  },
  OAuthConsumer: {
    read: STAFF,
    create: ["admin"],
    update: ["admin"],
    delete: ["admin"],
    changeRoles: NONE,
    setPassword: NONE,
    setActive: NONE,
    unlock: NONE,
    endSessions: NONE,
    invite: NONE,
    resetSecondFactor: NONE,
    readAccountState: NONE,
    changeEmails: NONE,
  },
  custom: {
    read: EVERYONE,
    create: ["admin"],
    update: ["admin"],
    delete: ["admin"],
    changeRoles: NONE,
    setPassword: NONE,
    setActive: NONE,
    unlock: NONE,
    endSessions: NONE,
    invite: NONE,
    resetSecondFactor: NONE,
    readAccountState: NONE,
    changeEmails: NONE,
  },
};

/**
 * The actions that manage an account's credentials rather than its data: a delegated credential
 * (an application acting for the user) never takes them, whatever the user's roles.
 */
const ACCOUNT_ACTIONS: ReadonlySet<ResourceAction> = new Set([
  "setPassword",
  "unlock",
  "endSessions",
  "invite",
  "resetSecondFactor",
]);

/**
 * The actions a delegated credential never takes on its own account, though it may on others (an
 * identity provider's token keeps the directory's addresses): the address that receives the
 * account's reset links is part of the account, and whoever moves it can reset the password.
 */
const OWN_ACCOUNT_ACTIONS: ReadonlySet<ResourceAction> = new Set(["changeEmails"]);

/** Whether `action` on `target` manages the account of the delegated credential's user (refused to it). */
function managesOwnAccount(principal: Principal, action: ResourceAction, target: Target): boolean {
  if (!principal.delegated) return false;
  return ACCOUNT_ACTIONS.has(action) || (OWN_ACCOUNT_ACTIONS.has(action) && target.id === principal.userId);
}

/** Why a delegated credential is refused an account operation: one sentence for every such refusal. */
export const DELEGATED_REFUSAL =
  "An application acting for a user (OAuth token credentials) or an API token cannot manage accounts: sessions, passwords, invitations, grants, API tokens and the account's own e-mail addresses need the user's own login.";

function grants(principal: Principal, grant: Grant, target: Target): boolean {
  if (grant === "self") return target.id !== undefined && target.id === principal.userId;
  if (grant === "support:ordinary") {
    return principal.roles.includes("support") && isOrdinary(target);
  }
  return principal.roles.includes(grant);
}

/**
 * Whether a holder of `role` alone may take `action` on the User `target` now: what a credential
 * issued under that role is still worth (services/issued-credentials.ts).
 */
export function roleMay(role: Role, action: ResourceAction, target: Target): boolean {
  return POLICY.User[action].some(
    (grant) => grant === role || (grant === "support:ordinary" && role === "support" && isOrdinary(target)),
  );
}

const isOrdinary = (target: Target) => !(target.roles ?? []).some((role) => PRIVILEGED.includes(role));

export function can(principal: Principal, action: ResourceAction, resourceType: string, target: Target = {}): boolean {
  if (managesOwnAccount(principal, action, target)) return false;
  return POLICY[kindOf(resourceType)][action].some((grant) => grants(principal, grant, target));
}

const ACTION_WORDS: Record<ResourceAction, string> = {
  read: "read",
  create: "create",
  update: "change",
  delete: "delete",
  changeRoles: "change the roles of",
  setPassword: "set the password of",
  setActive: "enable or disable",
  unlock: "unlock",
  endSessions: "end the sessions of",
  invite: "send an invitation to",
  resetSecondFactor: "reset the second factor of",
  readAccountState: "see the account state of",
  changeEmails: "change the e-mail addresses of",
};

/** Throws 404 for what the caller may not even read (so ids do not leak), 403 otherwise. */
export function assertCan(
  principal: Principal,
  action: ResourceAction,
  resourceType: string,
  target: Target = {},
): void {
  if (can(principal, action, resourceType, target)) return;
  if (action !== "create" && !can(principal, "read", resourceType, target)) {
    throw new ProblemError("not_found", `No resource with id ${target.id}.`);
  }
  if (managesOwnAccount(principal, action, target)) throw new ProblemError("forbidden", DELEGATED_REFUSAL);
  if (principal.roles.includes("support") && POLICY[kindOf(resourceType)][action].includes("support:ordinary")) {
    throw new ProblemError(
      "forbidden",
      `Support staff may ${ACTION_WORDS[action]} only users who hold neither the admin nor the support role; ask an admin.`,
    );
  }
  throw new ProblemError("forbidden", refusal(principal, action, resourceType));
}

/** What a resource is called in a sentence for a person. */
const nounOf = (resourceType: string) =>
  resourceType === "User"
    ? "users"
    : resourceType === "OAuthConsumer"
      ? "OAuth consumers"
      : `${resourceType} resources`;

const GRANT_WORDS: Record<Grant, string> = {
  admin: "an admin",
  support: "support staff",
  member: "a member",
  self: "the user itself",
  "support:ordinary": "support staff (on ordinary users)",
};

/**
 * A refusal a person at a help desk can act on: who may do it, what the caller's account is, and
 * whom to ask, in place of a role list and a type name.
 */
function refusal(principal: Principal, action: ResourceAction, resourceType: string): string {
  const who = POLICY[kindOf(resourceType)][action].map((grant) => GRANT_WORDS[grant]);
  const yours =
    principal.roles.length > 0 ? `your account is ${principal.roles.join(" and ")}` : "your account has no role";
  if (who.length === 0) return `No one may ${ACTION_WORDS[action]} ${nounOf(resourceType)}.`;
  return `Only ${who.join(" or ")} may ${ACTION_WORDS[action]} ${nounOf(resourceType)}, and ${yours}: ask an admin to do it.`;
}

/** Whether the caller may read every resource of these types (of every type when none are named). */
export function readsAllOf(principal: Principal, types: readonly string[] | undefined): boolean {
  const kinds: ResourceKind[] = types?.length ? types.map(kindOf) : ["User", "OAuthConsumer", "custom"];
  return kinds.every((kind) => principal.roles.some((role) => POLICY[kind].read.includes(role)));
}

/** The SQL condition over `resources r` that keeps what the caller may read. */
export function readableCondition(principal: Principal): RawBuilder<unknown> {
  const readers = (kind: ResourceKind) => principal.roles.some((role) => POLICY[kind].read.includes(role));
  const clauses: RawBuilder<unknown>[] = [];
  if (readers("custom")) clauses.push(sql`r.resource_type not in ('User', 'OAuthConsumer')`);
  if (readers("OAuthConsumer")) clauses.push(sql`r.resource_type = 'OAuthConsumer'`);
  if (readers("User")) clauses.push(sql`r.resource_type = 'User'`);
  else clauses.push(sql`(r.resource_type = 'User' and r.id = ${principal.userId})`);
  return sql`(${sql.join(clauses, sql` or `)})`;
}
