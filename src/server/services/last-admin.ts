import type { Kysely } from "kysely";
import { countsAsActiveAdmin, LAST_ADMIN_REFUSAL } from "../../contract/policy/index.js";
import { ProblemError } from "../problem-error.js";
import type { Schema } from "../store/schema.js";
import { countActiveAdmins, lockAdminChanges, roleNames } from "../store/users-repo.js";
import type { ServiceContext } from "./service-context.js";

type Attributes = Record<string, unknown>;

export function isActiveAdmin(attributes: Attributes): boolean {
  return countsAsActiveAdmin(roleNames(attributes), attributes.active);
}

/** Whether a change of a User from `before` to `after` (undefined: deleted) may leave no admin. */
export function takesAwayAnAdmin(before: Attributes, after: Attributes | undefined): boolean {
  return isActiveAdmin(before) && !(after && isActiveAdmin(after));
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
  if ((await countActiveAdmins(trx)) === 0) {
    throw new ProblemError(LAST_ADMIN_REFUSAL.code, LAST_ADMIN_REFUSAL.message);
  }
  return result;
}
