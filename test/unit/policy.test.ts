/**
 * The access policy (src/contract/policy) as a table: who asks (roles, and the credential: a
 * login, OAuth token credentials, an API token with scopes) x the target's roles x the operation
 * -> allowed or the rule that refuses. The server and the CLI both ask this module, so the HTTP
 * tests (test/server/authz, least-privilege) and the command tests check the same answers end to end.
 */
import { describe, expect, it } from "vitest";
import {
  ACCOUNT_ACTIONS,
  decide,
  decideOnResource,
  OPERATION_IDS,
  OPERATIONS,
  type OperationId,
  routeAccess,
  routeGate,
  type Subject,
} from "../../src/contract/policy/index.js";
import { API_TOKEN_SCOPES, type ApiTokenScope } from "../../src/contract/route.js";

type Credential = "login" | "oauth" | "token";
const ME = "u-me";

function subject(roles: string[], credential: Credential, scopes?: ApiTokenScope[]): Subject {
  return {
    userId: ME,
    roles,
    ...(credential === "oauth" && { delegated: "oauth" as const }),
    ...(credential === "token" && { delegated: "apiToken" as const, ...(scopes && { scopes }) }),
  };
}

const OTHER = "u-other";
const targets = {
  none: {},
  member: { id: OTHER, roles: ["member"] },
  support: { id: OTHER, roles: ["support"] },
  admin: { id: OTHER, roles: ["admin"] },
  "self-member": { id: ME, roles: ["member"] },
  "self-support": { id: ME, roles: ["support"] },
} as const;

// [caller roles, credential, operation, target, allowed or the rule that refuses]
const SCENARIOS: [string[], Credential, OperationId, keyof typeof targets, true | string][] = [
  // events: everyone reads; admin and member write; support does not
  [["member"], "login", "events:read", "none", true],
  [["support"], "login", "events:read", "none", true],
  [["admin"], "login", "events:write", "none", true],
  [["member"], "login", "events:write", "none", true],
  [["support"], "login", "events:write", "none", "no-grant"],
  [[], "login", "events:read", "none", "no-grant"],
  // users: reading others is staff's, and one's own is everyone's
  [["member"], "login", "users:read", "member", "no-grant"],
  [["member"], "login", "users:read", "self-member", true],
  [["support"], "login", "users:read", "admin", true],
  // admin only
  [["admin"], "login", "users:delete", "admin", true],
  [["support"], "login", "users:delete", "member", "no-grant"],
  [["support"], "login", "users:set-roles", "member", "no-grant"],
  [["member"], "login", "users:create", "none", "no-grant"],
  // deleted groups: a restore gives the group's roles back, so only an admin restores, lists or purges
  [["admin"], "login", "groups:restore", "admin", true],
  [["support"], "login", "groups:restore", "admin", "no-grant"],
  [["support"], "login", "groups:restore", "member", "no-grant"],
  [["support"], "login", "groups:list-deleted", "none", "no-grant"],
  [["support"], "login", "groups:purge", "member", "no-grant"],
  [["admin"], "login", "groups:purge", "admin", true],
  // least privilege: support helps ordinary users only, never staff, its own account included
  [["support"], "login", "users:set-password", "member", true],
  [["support"], "login", "users:set-password", "support", "least-privilege"],
  [["support"], "login", "users:set-password", "admin", "least-privilege"],
  [["support"], "login", "users:set-password", "self-support", "least-privilege"],
  [["support"], "login", "users:mfa-reset", "member", true],
  [["support"], "login", "users:mfa-reset", "admin", "least-privilege"],
  [["support"], "login", "users:set-active", "member", true],
  [["support"], "login", "users:set-active", "support", "least-privilege"],
  [["support"], "login", "users:unlock", "member", true],
  [["support"], "login", "users:end-sessions", "admin", "least-privilege"],
  [["support"], "login", "users:invite", "member", true],
  [["admin"], "login", "users:set-password", "admin", true],
  [["admin"], "login", "users:mfa-reset", "support", true],
  [["member"], "login", "users:set-password", "member", "no-grant"],
  [["member"], "login", "users:set-active", "self-member", "no-grant"],
  // a reset link: anyone may ask for an ordinary account's, only an admin sends one to staff
  [["member"], "login", "users:send-reset-link", "member", true],
  [["support"], "login", "users:send-reset-link", "admin", "least-privilege"],
  [["admin"], "login", "users:send-reset-link", "support", true],
  // other users' API tokens: admin's, and only from its own login
  [["admin"], "login", "tokens:revoke-other", "member", true],
  [["support"], "login", "tokens:revoke-other", "member", "no-grant"],
  [["admin"], "oauth", "tokens:list-other", "member", "delegated-credential"],
  [["admin"], "token", "tokens:revoke-other", "member", "delegated-credential"],
  // delegated credentials act on data, never on an account
  [["admin"], "oauth", "users:set-password", "member", "delegated-credential"],
  [["admin"], "token", "users:mfa-reset", "member", "delegated-credential"],
  [["admin"], "oauth", "users:delete", "member", true],
  [["member"], "oauth", "events:write", "none", true],
  // a token's scopes narrow its owner's roles, never widen them
  [["member"], "token", "events:write", "none", true],
  [["admin"], "token", "users:delete", "member", true],
  // other resource types and OAuth consumers
  [["member"], "login", "resources:read", "none", true],
  [["member"], "login", "resources:create", "none", "no-grant"],
  [["member"], "login", "oauth-consumers:read", "none", "no-grant"],
  [["support"], "login", "oauth-consumers:read", "none", true],
  [["support"], "login", "oauth-consumers:delete", "none", "no-grant"],
];

const SCOPED: [string[], ApiTokenScope[], OperationId, true | string][] = [
  [["member"], ["events:read"], "events:read", true],
  [["member"], ["events:read"], "events:write", "token-scope"],
  [["support"], ["events:write"], "events:write", "no-grant"],
  [["admin"], ["resources:read"], "users:delete", "token-scope"],
  [["admin"], ["resources:read"], "groups:restore", "token-scope"],
  [["admin"], ["resources:read"], "groups:list-deleted", true],
  [["admin"], ["resources:write"], "users:delete", true],
  [["admin"], [], "resources:read", "token-scope"],
];

const outcome = (decision: ReturnType<typeof decide>) => (decision.allowed ? true : decision.reasons.at(-1)?.rule);

describe("the access policy", () => {
  it.each(SCENARIOS)("%j by %s: %s on %s -> %s", (roles, credential, operation, target, expected) => {
    const decision = decide(subject(roles, credential), operation, targets[target]);
    expect(outcome(decision)).toBe(expected);
    expect(decision.refusal === undefined).toBe(decision.allowed);
    expect(decision.reasons[0]?.rule).toBe("roles");
  });

  it.each(SCOPED)("%j with a token of %j: %s -> %s", (roles, scopes, operation, expected) => {
    expect(outcome(decide(subject(roles, "token", scopes), operation, {}))).toBe(expected);
  });

  it("says why support may not restore a group that grants admin", () => {
    const decision = decide(subject(["support"], "login"), "groups:restore", targets.admin, {
      words: { about: "the group Root Team" },
    });
    expect(decision.refusal?.message).toMatch(
      /^Only an admin may restore the group Root Team, which grants admin or support/,
    );
  });

  it("explains an answer as a chain of facts", () => {
    const decision = decide(subject(["support"], "login"), "users:set-password", targets.admin);
    expect(decision).toEqual({
      allowed: false,
      operation: "users:set-password",
      reasons: [
        { rule: "roles", detail: "the caller holds support" },
        {
          rule: "least-privilege",
          detail: "the target holds admin or support, and only an admin acts on such an account",
        },
      ],
      refusal: {
        code: "forbidden",
        message:
          "Support staff may set the password of only users who hold neither the admin nor the support role; ask an admin.",
      },
    });
  });

  it.each([
    [
      ["member"],
      "users:set-password",
      "member",
      { about: "bob" },
      "Only an admin or support staff may set the password of bob, and your account is member: ask an admin to do it.",
    ],
    [
      ["support"],
      "users:mfa-reset",
      "admin",
      { about: "root" },
      "Only an admin may reset the second factor of root, who holds the admin or support role, and your account is support: ask an admin to do it.",
    ],
    [
      ["support"],
      "users:set-active",
      "admin",
      { verb: "disable", about: "a (1), b (2)", count: 2 },
      "Only an admin may disable a (1), b (2), who hold the admin or support role, and your account is support: ask an admin to do it.",
    ],
    [
      ["support"],
      "users:send-reset-link",
      "support",
      { about: "sam" },
      "Only an admin may send a reset link to sam, who holds admin or support, and your account is support: ask an admin to do it.",
    ],
    [
      ["support"],
      "events:write",
      "none",
      { verb: "create", about: "events" },
      "Only an admin or a member may create events, and your account is support: ask an admin to do it.",
    ],
    [
      [],
      "users:delete",
      "none",
      { about: "users" },
      "Only an admin may delete users, and your account has no role: ask an admin to do it.",
    ],
  ] as const)("%j: %s on %s says what to do", (roles, operation, target, words, message) => {
    const decision = decide(subject([...roles], "login"), operation, targets[target], { words });
    expect(decision.refusal?.message).toBe(message);
  });

  it("hides from a /Resources caller what it may not read, and names what no one may do", () => {
    const member = subject(["member"], "login");
    expect(decideOnResource(member, "setPassword", "User", targets.admin).refusal).toEqual({
      code: "not_found",
      message: `No resource with id ${OTHER}.`,
    });
    expect(decideOnResource(member, "setPassword", "User", targets["self-member"]).refusal?.message).toBe(
      "Only an admin or support staff (on ordinary users) may set the password of users, and your account is member: ask an admin to do it.",
    );
    expect(decideOnResource(subject(["admin"], "login"), "changeRoles", "OAuthConsumer", {}).refusal?.message).toBe(
      "No one may change the roles of OAuth consumers.",
    );
    expect(decideOnResource(member, "create", "Project", {}).refusal?.message).toBe(
      "Only an admin may create Project resources, and your account is member: ask an admin to do it.",
    );
  });

  it("marks as account management exactly what delegated credentials may not do", () => {
    expect([...ACCOUNT_ACTIONS].sort()).toEqual([
      "endSessions",
      "invite",
      "resetSecondFactor",
      "setPassword",
      "unlock",
    ]);
    for (const id of OPERATION_IDS) {
      const rule: { grants: readonly string[]; managesAccount?: true; scope?: string } = OPERATIONS[id];
      // an operation a token may never take has no scope to grant it
      if (rule.managesAccount) expect(rule.scope, id).toBeUndefined();
    }
  });

  it("gives a route the operation's roles and scope, and its gate refuses in the order a request meets them", () => {
    expect(routeAccess("events:write")).toEqual({ roles: ["admin", "member"], scope: "events:write" });
    expect(routeAccess("tokens:revoke-other")).toEqual({ roles: ["admin"], managesAccount: true });
    const gate = routeGate({ roles: ["admin"], managesAccount: true });
    expect(gate({ roles: ["admin"], firstLogin: true, delegated: "oauth" })?.code).toBe("password_change_required");
    expect(gate({ roles: ["admin"], mfaEnrollmentRequired: true })?.code).toBe("mfa_enrollment_required");
    expect(gate({ roles: ["admin"], delegated: "apiToken", scopes: [] })?.message).toMatch(/cannot manage accounts/);
    expect(gate({ roles: ["member"] })?.message).toBe(
      "Only an account with the role admin may do this, and yours is member: ask an admin to do it, or to give you the role.",
    );
    expect(gate({ roles: ["admin"] })).toBeUndefined();
    const scoped = routeGate(routeAccess("events:write"));
    expect(scoped({ roles: ["member"], delegated: "apiToken", scopes: ["events:read"] })?.message).toBe(
      "This API token does not have the scope events:write.",
    );
  });

  // an admin's API token of every scope: the gate of the operation's route and decide() give one answer
  it.each(OPERATION_IDS)("a token of every scope on %s: the route gate and decide agree", (operation) => {
    const token = subject(["admin"], "token", [...API_TOKEN_SCOPES]);
    const gateRefusal = routeGate(routeAccess(operation))(token);
    const decision = decide(token, operation, targets.member);
    expect(decision.allowed).toBe(gateRefusal === undefined);
    if (gateRefusal) expect(decision.refusal?.message).toBe(gateRefusal.message);
  });
});
