import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import * as deletedGroups from "../../contract/deleted-groups.js";
import { findKept } from "../kept-deleted.js";
import { examples, withContext } from "../verb-helpers.js";

// The deleted groups a server keeps for a restore (`server start --retain-deleted`), as `users
// deleted|restore|purge` do for users: admins list them, bring one back, or purge one.

const COLUMNS = ["id", "displayName", "roles", "members", "deletedAt", "purgeAfter"];

async function findDeleted(ctx: Context, reference: string) {
  const { data } = await (await ctx.client()).call(deletedGroups.listDeletedGroups);
  return findKept(data.Resources, reference, (group) => group.displayName, "group");
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("deleted")
    .description(
      "the deleted groups kept for a restore: id, name, roles granted, members, deleted at, purge after (admin)",
    )
    .addHelpText("after", examples("bizctl groups deleted", "bizctl groups deleted --json"))
    .action(
      withContext(io, async (ctx) => {
        ctx.requireCredential();
        const { data } = await (await ctx.client()).call(deletedGroups.listDeletedGroups);
        if (data.Resources.length === 0) ctx.info("No deleted group is kept.");
        await ctx.print(data.Resources, COLUMNS);
      }),
    );
  group
    .command("restore <group>")
    .description(
      "bring a deleted group back (by id or name): name, externalId, roles, and the members that still exist, who get its roles at once (admin)",
    )
    .addHelpText("after", examples("bizctl groups restore 'Old Team'"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        const found = await findDeleted(ctx, reference);
        const { data } = await (await ctx.client()).call(deletedGroups.restoreDeletedGroup, {
          params: { id: found.id },
        });
        const grants = data.roles.length ? `, granting ${data.roles.join(", ")}` : "";
        ctx.info(`Restored the group ${data.displayName} (${data.id}) with ${data.members} member(s)${grants}.`);
        const kept = data.membersNotRestored.filter((member) => member.userName !== undefined);
        const purged = data.membersNotRestored.filter((member) => member.userName === undefined);
        if (kept.length > 0) {
          const names = kept.map((member) => member.userName).join(", ");
          ctx.info(`Not restored, deleted users: ${names}; their restore brings them back in (bizctl users restore).`);
        }
        if (purged.length > 0) {
          ctx.info(`Not restored, purged users: ${purged.map((member) => member.id).join(", ")}.`);
        }
        await ctx.print(data, ["id", "displayName", "roles", "members", "membersNotRestored"]);
      }),
    );
  group
    .command("purge <group>")
    .description("end the wait of a deleted group (by id or name): gone for good, its names free (asks first; admin)")
    .addHelpText("after", examples("bizctl groups purge 'Old Team' --yes"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        const found = await findDeleted(ctx, reference);
        if (!ctx.globals.yes) {
          await refuseBeforeAsking(
            ctx,
            "groups:purge",
            { roles: found.roles },
            { about: `the group ${found.displayName}` },
          );
        }
        await ctx.confirm(`Purge the deleted group ${found.displayName} (${found.id}) for good?`);
        await (await ctx.client()).call(deletedGroups.purgeDeletedGroup, { params: { id: found.id } });
        ctx.info(`Purged the group ${found.displayName}.`);
      }),
    );
}
