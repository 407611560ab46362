import type { Role } from "../route.js";
import type { Refusal } from "./decide.js";

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
