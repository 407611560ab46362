import { type RawBuilder, sql } from "kysely";
import type { Role } from "../../contract/route.js";
import { ProblemError } from "../problems.js";
import type { Principal } from "./context.js";

export type ResourceKind = "User" | "OAuthConsumer" | "custom";
export type ResourceAction = "read" | "create" | "update" | "delete" | "changeRoles" | "setPassword" | "setActive";

export function kindOf(resourceType: string): ResourceKind {
  return resourceType === "User" || resourceType === "OAuthConsumer" ? resourceType : "custom";
}

/**
 * The roles table of the specification for resources, in one place. `self` lets a member read
 * its own User. Route-level access (who may call an operation at all) lives in the contract.
 */
const POLICY: Record<ResourceKind, Record<ResourceAction, readonly (Role | "self")[]>> = {
  User: {
    read: ["admin", "support", "self"],
    create: ["admin"],
    update: ["admin"],
    delete: ["admin"],
    changeRoles: ["admin"],
    setPassword: ["admin", "support"],
    setActive: ["admin", "support"],
  },
  OAuthConsumer: {
    read: ["admin", "support"],
    create: ["admin"],
    update: ["admin"],
    delete: ["admin"],
    changeRoles: [],
    setPassword: [],
    setActive: [],
  },
  custom: {
    read: ["admin", "support", "member"],
    create: ["admin"],
    update: ["admin"],
    delete: ["admin"],
    changeRoles: [],
    setPassword: [],
    setActive: [],
  },
};

export function can(principal: Principal, action: ResourceAction, resourceType: string, resourceId?: string): boolean {
  const allowed = POLICY[kindOf(resourceType)][action];
  if (principal.roles.some((role) => allowed.includes(role))) return true;
  return allowed.includes("self") && resourceId !== undefined && resourceId === principal.userId;
}

const ACTION_WORDS: Record<ResourceAction, string> = {
  read: "read",
  create: "create",
  update: "change",
  delete: "delete",
  changeRoles: "change the roles of",
  setPassword: "set the password of",
  setActive: "enable or disable",
};

/** Throws 404 for what the caller may not even read (so ids do not leak), 403 otherwise. */
export function assertCan(
  principal: Principal,
  action: ResourceAction,
  resourceType: string,
  resourceId?: string,
): void {
  if (can(principal, action, resourceType, resourceId)) return;
  if (action !== "create" && !can(principal, "read", resourceType, resourceId)) {
    throw new ProblemError("not_found", `No resource with id ${resourceId}.`);
  }
  throw new ProblemError(
    "forbidden",
    `Your roles (${principal.roles.join(", ") || "none"}) may not ${ACTION_WORDS[action]} resources of type ${resourceType}.`,
  );
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
