import type { Role } from "../route.js";
import type { Reason, Refusal } from "./decide.js";
import type { OperationId } from "./operations.js";

/**
 * The last-admin rule (spec section 1): no operation may leave the service without an active
 * admin who can log in, since nothing in the API could then bring one back.
 */
export const LAST_ADMIN_REFUSAL: Refusal = {
  code: "last_admin",
  message:
    "This is the last active admin: disabling, deleting or demoting it would leave nobody to administer the service.",
};

/** The roles that administer the service: an active account holding one, its own or a group's, counts. */
export const ADMIN_ROLES: readonly Role[] = ["admin"];

/** Whether an account with these (effective) roles and this `active` counts toward the rule. */
export const countsAsActiveAdmin = (roles: readonly string[], active: unknown) =>
  active !== false && roles.some((role) => (ADMIN_ROLES as readonly string[]).includes(role));

/** The SCIM filter of the Users the rule counts. */
export const ACTIVE_ADMINS_FILTER = 'roles.value eq "admin" and active eq true';

/** The operations that can take an admin away: on the last active admin, the rule refuses them. */
export const ADMIN_TAKING_OPERATIONS: ReadonlySet<OperationId> = new Set([
  "users:delete",
  "users:set-active",
  "users:set-roles",
]);

/**
 * The last-admin rule as a fact of an explanation: when the target is the last active admin and
 * the operation can take it away, whoever asks is refused its disabling, deletion or demotion.
 */
export function lastAdminReason(
  operation: OperationId,
  target: { roles: readonly string[]; active: unknown },
  activeAdmins: number,
): Reason | undefined {
  if (!ADMIN_TAKING_OPERATIONS.has(operation) || !countsAsActiveAdmin(target.roles, target.active)) return undefined;
  if (activeAdmins > 1) return undefined;
  return {
    rule: "last-admin",
    detail: `the target is the last active admin: disabling, deleting or demoting it is refused (${LAST_ADMIN_REFUSAL.code}), whoever asks`,
  };
}
