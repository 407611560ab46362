import type { Kysely } from "kysely";
import {
  ADMIN_ROLES,
  countsAsActiveAdmin,
  effectiveRoles,
  LAST_ADMIN_REFUSAL,
  rolesOfBits,
} from "../../contract/policy/index.js";
import type { Role } from "../../contract/route.js";
import { ProblemError } from "../problem-error.js";
import type { Schema } from "../store/schema.js";
import { countActiveAdmins, lockAdminChanges, roleNames } from "../store/users-repo.js";
import type { ServiceContext } from "./service-context.js";

type Attributes = Record<string, unknown>;

/** Whether a User of these attributes, in groups that grant `groupRoles`, is an active admin. */
export function isActiveAdmin(attributes: Attributes, groupRoles: readonly Role[] = []): boolean {
  return countsAsActiveAdmin(effectiveRoles(roleNames(attributes), groupRoles), attributes.active);
}

/** A User's effective roles: its attributes' and those of its groups (a stored row's `group_roles`). */
export const userRolesOf = (attributes: Attributes, groupRoles: unknown): Role[] =>
  effectiveRoles(roleNames(attributes), rolesOfBits(groupRoles));

/**
 * Whether a change of a User from `before` to `after` (undefined: deleted) may leave no admin;
 * `groupRoles`: what its groups grant it, which its own change leaves as they are.
 */
export function takesAwayAnAdmin(
  before: Attributes,
  after: Attributes | undefined,
  groupRoles: readonly Role[] = [],
): boolean {
  return isActiveAdmin(before, groupRoles) && !(after && isActiveAdmin(after, groupRoles));
}

/**
 * Runs, inside a transaction, a change that takes away an admin, and undoes it when no active
 * admin who can log in would remain: nothing in the API could then bring one back.
 */
export async function keepingAnAdmin<T>(
  ctx: ServiceContext,
  trx: Kysely<Schema>,
  change: () => Promise<T>,
): Promise<T> {
  await lockAdminChanges(trx, ctx.store.dialect);
  const result = await change();
  if ((await countActiveAdmins(trx, ADMIN_ROLES)) === 0) {
    throw new ProblemError(LAST_ADMIN_REFUSAL.code, LAST_ADMIN_REFUSAL.message);
  }
  return result;
}
