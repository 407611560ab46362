import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import * as groups from "../../contract/scim-groups.js";
import { examples, withContext } from "../verb-helpers.js";
import { checkRoles, PATCH_SCHEMAS, ROLES_PATH, resolveGroup } from "./shared.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("set-roles <group> [roles...]")
    .description("replace the roles a group grants its members (admin, support, member; none: no role); admins only")
    .addHelpText(
      "after",
      examples("bizctl groups set-roles 'Help Desk' support", "bizctl groups set-roles 'Help Desk'"),
    )
    .action(
      withContext(io, async (ctx, reference: string, roles: string[]) => {
        ctx.requireCredential();
        const checked = checkRoles(roles);
        const found = await resolveGroup(ctx, reference);
        await refuseBeforeAsking(
          ctx,
          "groups:set-roles",
          { roles: checked },
          { about: `the group ${found.displayName}` },
        );
        await (await ctx.client()).call(groups.patchGroup, {
          params: { id: found.id },
          body: { schemas: PATCH_SCHEMAS, Operations: [{ op: "replace", path: ROLES_PATH, value: checked }] },
        });
        ctx.info(
          checked.length
            ? `${found.displayName} now grants ${checked.join(", ")}.`
            : `${found.displayName} now grants no role.`,
        );
      }),
    );
}
