import type { Context } from "../../cli/command-context.js";
import { CliError, EXIT, UsageError } from "../../cli/errors.js";
import { ROLES, type Role } from "../../contract/route.js";
import { SCIM_URN } from "../../contract/scim.js";
import * as groups from "../../contract/scim-groups.js";

/** A group as a table shows it: its roles out of the extension, its members left out. */
export interface GroupRecord extends Record<string, unknown> {
  id: string;
  displayName: string;
  roles: string[];
}

export const GROUP_COLUMNS = ["id", "displayName", "externalId", "roles"];

export const PATCH_SCHEMAS = [SCIM_URN.patchOp];

/** The roles path of a PATCH. */
export const ROLES_PATH = `${SCIM_URN.groupRoles}:roles`;

/** A group as the API answers it, flattened for a person: `roles` beside the other attributes. */
export function groupRecord(answer: Record<string, unknown>): GroupRecord {
  const { schemas: _schemas, [SCIM_URN.groupRoles]: extension, members, meta, ...rest } = answer;
  const roles = ((extension as { roles?: string[] } | undefined)?.roles ?? []) as string[];
  const { created, lastModified } = (meta ?? {}) as Record<string, unknown>;
  return {
    ...(rest as { id: string; displayName: string }),
    roles,
    ...(Array.isArray(members) && { members }),
    created,
    lastModified,
  };
}

export function checkRoles(roles: string[]): Role[] {
  for (const role of roles) {
    if (!ROLES.includes(role as Role)) throw new UsageError(`Unknown role '${role}'; roles are ${ROLES.join(", ")}.`);
  }
  return roles as Role[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The group a person names: by its display name (in any case) or its id; without its members. */
export async function resolveGroup(ctx: Context, reference: string): Promise<GroupRecord> {
  if (reference.trim() === "") throw new UsageError("Name a group: its display name or its id.");
  const client = await ctx.client();
  const { data } = await client.call(groups.listGroups, {
    query: { filter: `displayName eq ${JSON.stringify(reference)}`, excludedattributes: "members" },
  });
  const found = data.Resources[0];
  if (found) return groupRecord(found as Record<string, unknown>);
  if (UUID.test(reference)) {
    const byId = await client.call(groups.getGroup, {
      params: { id: reference },
      query: { excludedattributes: "members" },
    });
    return groupRecord(byId.data as Record<string, unknown>);
  }
  throw new CliError(`No group '${reference}' (looked up by display name and id).`, EXIT.notFound, "not_found");
}
