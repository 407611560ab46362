import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import * as groups from "../../contract/scim-groups.js";
import { examples, withContext } from "../verb-helpers.js";
import { resolveGroup } from "./shared.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("delete <group>")
    .description("delete a group (admins): its members lose its roles at once (asks first; --yes without a terminal)")
    .addHelpText("after", examples("bizctl groups delete 'Help Desk' --yes"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        const found = await resolveGroup(ctx, reference);
        if (!ctx.globals.yes) {
          await refuseBeforeAsking(
            ctx,
            "groups:delete",
            { roles: found.roles },
            { about: `the group ${found.displayName}` },
          );
        }
        const grants = found.roles.length ? `; its members lose ${found.roles.join(", ")}` : "";
        await ctx.confirm(`Delete the group ${found.displayName} (${found.id})${grants}?`);
        await (await ctx.client()).call(groups.deleteGroup, { params: { id: found.id } });
        ctx.info(`Deleted the group ${found.displayName}.`);
      }),
    );
}
