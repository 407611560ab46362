import { UsageError } from "../../cli/errors.js";
import { ROLES, type Role } from "../../contract/route.js";

export function checkRoles(roles: string[]): void {
  for (const role of roles) {
    if (!ROLES.includes(role as Role)) throw new UsageError(`Unknown role '${role}'; roles are ${ROLES.join(", ")}.`);
  }
}

/** The `roles` attribute of a user holding these roles, the first one primary. */
export const rolesAttribute = (roles: string[]) => roles.map((value, i) => ({ value, primary: i === 0 }));
