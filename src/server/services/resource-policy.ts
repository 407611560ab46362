import { type RawBuilder, sql } from "kysely";
import {
  allowsOnResource,
  decideOnResource,
  kindOf,
  type OperationId,
  roleMay as policyRoleMay,
  type ResourceAction,
  type ResourceKind,
  resourceOperation,
  rolesGranted,
  type Target,
} from "../../contract/policy/index.js";
import type { Role } from "../../contract/route.js";
import { ProblemError } from "../problem-error.js";
import type { Principal } from "./service-context.js";

export { DELEGATED_REFUSAL, kindOf } from "../../contract/policy/index.js";
/**
 * The server's side of the access policy (contract/policy), which holds the roles table, least
 * privilege and the words of every refusal: here it becomes problem documents and SQL.
 */
export type { ResourceAction, ResourceKind, Target };

/**
 * Whether a holder of `role` alone may take `action` on the User `target` now: what a credential
 * issued under that role is still worth (services/issued-credentials.ts).
 */
export function roleMay(role: Role, action: ResourceAction, target: Target): boolean {
  const operation = resourceOperation("User", action);
  return operation !== undefined && policyRoleMay(role, operation, target);
}

export const can = (principal: Principal, action: ResourceAction, resourceType: string, target: Target = {}) =>
  allowsOnResource(principal, action, resourceType, target);

/** Throws 404 for what the caller may not even read (so ids do not leak), 403 otherwise. */
export function assertCan(
  principal: Principal,
  action: ResourceAction,
  resourceType: string,
  target: Target = {},
): void {
  if (allowsOnResource(principal, action, resourceType, target)) return;
  const { refusal } = decideOnResource(principal, action, resourceType, target);
  if (refusal) throw new ProblemError(refusal.code, refusal.message);
}

const readers = (principal: Principal, kind: ResourceKind) => {
  // every kind has a read operation; "custom" names no type, so it is read as one
  const granted = rolesGranted(resourceOperation(kind, "read") as OperationId);
  return principal.roles.some((role) => granted.includes(role));
};

/** Whether the caller may read every resource of these types (of every type when none are named). */
export function readsAllOf(principal: Principal, types: readonly string[] | undefined): boolean {
  const kinds: ResourceKind[] = types?.length ? types.map(kindOf) : ["User", "OAuthConsumer", "custom"];
  return kinds.every((kind) => readers(principal, kind));
}

/** The SQL condition over `resources r` that keeps what the caller may read. */
export function readableCondition(principal: Principal): RawBuilder<unknown> {
  const clauses: RawBuilder<unknown>[] = [];
  if (readers(principal, "custom")) clauses.push(sql`r.resource_type not in ('User', 'OAuthConsumer')`);
  if (readers(principal, "OAuthConsumer")) clauses.push(sql`r.resource_type = 'OAuthConsumer'`);
  if (readers(principal, "User")) clauses.push(sql`r.resource_type = 'User'`);
  else clauses.push(sql`(r.resource_type = 'User' and r.id = ${principal.userId})`);
  return sql`(${sql.join(clauses, sql` or `)})`;
}
