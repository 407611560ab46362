import { type ApiTokenScope, EVENT_WRITERS, EVERYONE, type Role, STAFF } from "../route.js";

/**
 * Who a grant lets act: a role on any target; `self` on the caller's own User; `support:ordinary`
 * support on Users who hold neither admin nor support (help-desk least privilege: otherwise a
 * support account could set an admin's password and log in as that admin); `anyone:ordinary`
 * anyone on such a User (what the public forgot-password flow lets anybody trigger).
 */
export type Grant = Role | "self" | "support:ordinary" | "anyone:ordinary";

/** What a request to /Resources does to a resource, as the rules below distinguish it. */
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

export type ResourceKind = "User" | "OAuthConsumer" | "custom";

export function kindOf(resourceType: string): ResourceKind {
  return resourceType === "User" || resourceType === "OAuthConsumer" ? resourceType : "custom";
}

/** One operation's rule: who may, and the words a refusal says it with. */
export interface OperationRule {
  readonly grants: readonly Grant[];
  /** "set the password of": what the operation does, before its noun */
  readonly verb: string;
  /** "users": what it acts on, in the plural */
  readonly noun: string;
  /**
   * it manages an account (sessions, passwords, second factors, tokens) rather than data: a
   * credential delegated to an application (OAuth token credentials, an API token) never may
   */
  readonly managesAccount?: true;
  /**
   * it manages the account when aimed at the credential's own User, though not at others' (an
   * identity provider's token keeps the directory's addresses): the address that receives the
   * account's reset links is part of the account, and whoever moves it can reset the password
   */
  readonly managesOwnAccount?: true;
  /** the API-token scope that covers it (spec 1.7): a token without it may not, whatever its owner's roles */
  readonly scope?: ApiTokenScope;
  /** how a refusal that names a privileged target says why ("who holds the admin or support role") */
  readonly privilegedWords?: string;
}

const ADMIN: readonly Grant[] = ["admin"];
// setting a password, an invitation (lets its holder set the first one) and a second factor's
// reset (lets whoever holds the password in without a code) are all worth the same
const HELP_DESK: readonly Grant[] = ["admin", "support:ordinary"];

const user = (verb: string, grants: readonly Grant[], more: Partial<OperationRule> = {}): OperationRule => ({
  grants,
  verb,
  noun: "users",
  ...more,
});
const reads = { scope: "resources:read" } as const;
const writes = { scope: "resources:write" } as const;
const account = { managesAccount: true } as const;

/**
 * The operations table of spec section 1 (and 1.7), by stable id: the one place where who may do
 * what is written. `access explain USER OPERATION` names these ids.
 */
export const OPERATIONS = {
  "events:read": { grants: EVERYONE, verb: "read", noun: "events", scope: "events:read" },
  "events:write": { grants: EVENT_WRITERS, verb: "create, change or delete", noun: "events", scope: "events:write" },
  "users:read": user("read", ["admin", "support", "self"], reads),
  "users:create": user("create", ADMIN, writes),
  "users:update": user("change", ADMIN, writes),
  "users:delete": user("delete", ADMIN, writes),
  "users:set-roles": user("change the roles of", ADMIN, writes),
  "users:set-password": user("set the password of", HELP_DESK, account),
  "users:set-active": user("enable or disable", HELP_DESK, writes),
  "users:unlock": user("unlock", HELP_DESK, account),
  "users:end-sessions": user("end the sessions of", HELP_DESK, account),
  "users:invite": user("send an invitation to", HELP_DESK, account),
  "users:mfa-reset": user("reset the second factor of", HELP_DESK, account),
  "users:read-account-state": user("see the account state of", STAFF),
  // why a user cannot sign in: account state, so as users:read-account-state (no API token)
  "users:diagnose": user("diagnose", STAFF),
  // what a user may do and why (access explain): staff, who may read every User
  "users:explain-access": user("explain the access of", STAFF),
  "users:change-emails": user("change the e-mail addresses of", ADMIN, { ...writes, managesOwnAccount: true }),
  // the public forgot-password flow, which cannot tell who asked: a link that support sends may
  // not open a privileged account (spec 1.1), so only an admin sends one to such an account
  "users:send-reset-link": user("send a reset link to", ["admin", "anyone:ordinary"], {
    privilegedWords: "who holds admin or support",
  }),
  "oauth-consumers:read": { grants: STAFF, verb: "read", noun: "OAuth consumers", ...reads },
  "oauth-consumers:create": { grants: ADMIN, verb: "create", noun: "OAuth consumers", ...writes },
  "oauth-consumers:update": { grants: ADMIN, verb: "change", noun: "OAuth consumers", ...writes },
  "oauth-consumers:delete": { grants: ADMIN, verb: "delete", noun: "OAuth consumers", ...writes },
  "resources:read": { grants: EVERYONE, verb: "read", noun: "resources", ...reads },
  "resources:create": { grants: ADMIN, verb: "create", noun: "resources", ...writes },
  "resources:update": { grants: ADMIN, verb: "change", noun: "resources", ...writes },
  "resources:delete": { grants: ADMIN, verb: "delete", noun: "resources", ...writes },
  "tokens:list-other": user("list the API tokens of", ADMIN, account),
  "tokens:revoke-other": user("revoke the API tokens of", ADMIN, account),
  // groups (spec 1.9): the target's roles are those the group grants its members
  "groups:read": { grants: STAFF, verb: "read", noun: "groups", ...reads },
  "groups:create": { grants: ADMIN, verb: "create", noun: "groups", ...writes },
  "groups:update": { grants: ADMIN, verb: "rename", noun: "groups", ...writes },
  "groups:set-roles": { grants: ADMIN, verb: "change the roles of", noun: "groups", ...writes },
  "groups:delete": { grants: ADMIN, verb: "delete", noun: "groups", ...writes },
  // deleted groups kept for a restore (spec 1.10): a restore gives the group's roles back to its
  // members, as creating it with them does, so it is an admin's, whatever the group grants
  "groups:list-deleted": { grants: ADMIN, verb: "list the deleted", noun: "groups", ...reads },
  "groups:restore": {
    grants: ADMIN,
    verb: "restore",
    noun: "deleted groups",
    privilegedWords: "which grants admin or support",
    ...writes,
  },
  "groups:purge": { grants: ADMIN, verb: "purge", noun: "deleted groups", ...writes },
  // least privilege: support changes the members of a group that grants neither admin nor support
  "groups:change-members": {
    grants: HELP_DESK,
    verb: "change the members of",
    noun: "groups",
    privilegedWords: "which grants admin or support",
    ...writes,
  },
  "service-accounts:manage": {
    grants: ADMIN,
    verb: "create, list or make API tokens for",
    noun: "service accounts",
    ...account,
  },
  // a grant is listed and revoked by its user; these are the grants of someone else
  "oauth-grants:list-other": user("list the OAuth grants of", ADMIN),
  "oauth-grants:revoke-other": user("revoke the OAuth grants of", ADMIN),
  // the audit trail: everyone reads the records where they are actor or target; staff read the
  // others' too, with their request origins; key operations concern the deployment, not the
  // people support helps, so only an admin reads them
  "audit:read-others": {
    grants: STAFF,
    verb: "read the records of others in",
    noun: "the audit trail",
    scope: "audit:read",
  },
  "audit:read-keys": {
    grants: ADMIN,
    verb: "read the key operations in",
    noun: "the audit trail",
    scope: "audit:read",
  },
} as const satisfies Record<string, OperationRule>;

export type OperationId = keyof typeof OPERATIONS;

export const OPERATION_IDS = Object.keys(OPERATIONS) as OperationId[];

export const isOperationId = (text: string): text is OperationId => Object.hasOwn(OPERATIONS, text);

/** The roles an operation's grants name outright (not `self`, not only on ordinary users). */
export function rolesGranted(operation: OperationId): readonly Role[] {
  return (OPERATIONS[operation].grants as readonly Grant[]).filter((grant): grant is Role =>
    (EVERYONE as readonly string[]).includes(grant),
  );
}

/** The operation a /Resources request of this action on this type is; undefined: no one may. */
const RESOURCE_OPERATIONS: Record<ResourceKind, Partial<Record<ResourceAction, OperationId>>> = {
  User: {
    read: "users:read",
    create: "users:create",
    update: "users:update",
    delete: "users:delete",
    changeRoles: "users:set-roles",
    setPassword: "users:set-password",
    setActive: "users:set-active",
    unlock: "users:unlock",
    endSessions: "users:end-sessions",
    invite: "users:invite",
    resetSecondFactor: "users:mfa-reset",
    readAccountState: "users:read-account-state",
    changeEmails: "users:change-emails",
  },
  OAuthConsumer: {
    read: "oauth-consumers:read",
    create: "oauth-consumers:create",
    update: "oauth-consumers:update",
    delete: "oauth-consumers:delete",
  },
  custom: {
    read: "resources:read",
    create: "resources:create",
    update: "resources:update",
    delete: "resources:delete",
  },
};

export const resourceOperation = (resourceType: string, action: ResourceAction): OperationId | undefined =>
  RESOURCE_OPERATIONS[kindOf(resourceType)][action];

/** What an action does, in a refusal, for an action no one may take on a type. */
export const ACTION_WORDS: Record<ResourceAction, string> = {
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

/**
 * The actions that manage an account's credentials rather than its data: a delegated credential
 * (an application acting for the user) never takes them, whatever the user's roles.
 */
export const ACCOUNT_ACTIONS: ReadonlySet<ResourceAction> = new Set(
  (Object.entries(RESOURCE_OPERATIONS.User) as [ResourceAction, OperationId][])
    .filter(([, operation]) => (OPERATIONS[operation] as OperationRule).managesAccount)
    .map(([action]) => action),
);

/** What a resource is called in a sentence for a person. */
export const nounOf = (resourceType: string) =>
  resourceType === "User"
    ? "users"
    : resourceType === "OAuthConsumer"
      ? "OAuth consumers"
      : `${resourceType} resources`;

/**
 * A route's access rule (contract `Access`) for a route that is one operation of the table: its
 * roles, its token scope, whether it manages an account; so that the route and the table agree.
 */
export function routeAccess(operation: OperationId): {
  roles: readonly Role[];
  scope?: ApiTokenScope;
  managesAccount?: true;
} {
  const rule: OperationRule = OPERATIONS[operation];
  return {
    roles: rolesGranted(operation),
    ...(rule.scope && { scope: rule.scope }),
    ...(rule.managesAccount && { managesAccount: true }),
  };
}
