import { ROLES, type Role } from "../route.js";

/**
 * A User's effective roles (spec 1.9): its own (direct) roles joined with those of its groups.
 * The one place they are joined: the account every credential is checked against (sessions, API
 * tokens, OAuth grants), the last-admin count and the least privilege rule all read them from here.
 */

/** One role of a User and where it comes from: `direct`, or the name of a group that grants it. */
export interface RoleSource {
  role: Role;
  source: string;
}

/** Where a User's group roles come from: each group's name and the roles it grants. */
export interface GroupGrant {
  displayName: string;
  roles: readonly Role[];
}

/** The roles a group grants, as a bit mask: what the store reads of a User's groups in one value. */
export const ROLE_BITS: Record<Role, number> = { admin: 1, support: 2, member: 4 };

/** The roles of a bit mask (the store's `group_roles`), in the order of ROLES. */
export const rolesOfBits = (bits: unknown): Role[] => {
  const mask = Number(bits ?? 0);
  return ROLES.filter((role) => (mask & ROLE_BITS[role]) !== 0);
};

/** The direct roles joined with the group roles, each once, in the order of ROLES. */
export function effectiveRoles(direct: readonly string[], fromGroups: readonly string[] = []): Role[] {
  const held = new Set<string>([...direct, ...fromGroups]);
  return ROLES.filter((role) => held.has(role));
}

/** Each effective role with every source that grants it (`direct` first, then the groups by name). */
export function roleSources(direct: readonly string[], groups: readonly GroupGrant[]): RoleSource[] {
  const sources: RoleSource[] = [];
  for (const role of ROLES) {
    if (direct.includes(role)) sources.push({ role, source: "direct" });
    for (const group of [...groups].sort((a, b) => a.displayName.localeCompare(b.displayName))) {
      if (group.roles.includes(role)) sources.push({ role, source: group.displayName });
    }
  }
  return sources;
}
