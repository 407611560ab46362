import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as deletedUsers from "../../contract/deleted-users.js";
import { findKept } from "../kept-deleted.js";
import { examples, withContext } from "../verb-helpers.js";

// The deleted users a server keeps for a restore (`server start --retain-deleted`): admins list
// them, bring one back, or purge one. A deleted user is found by its id or its userName, among
// the deleted ones only: every other read answers 404 for it.

const COLUMNS = ["id", "userName", "deletedAt", "purgeAfter"];

async function listDeleted(ctx: Context) {
  const { data } = await (await ctx.client()).call(deletedUsers.listDeletedUsers);
  return data.Resources;
}

async function findDeleted(ctx: Context, reference: string) {
  return findKept(await listDeleted(ctx), reference, (user) => user.userName, "user");
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("deleted")
    .description("the deleted users kept for a restore: id, user name, deleted at, purge after (admin)")
    .addHelpText("after", examples("bizctl users deleted", "bizctl users deleted --json"))
    .action(
      withContext(io, async (ctx) => {
        ctx.requireCredential();
        const users = await listDeleted(ctx);
        if (users.length === 0) ctx.info("No deleted user is kept.");
        await ctx.print(users, COLUMNS);
      }),
    );
  group
    .command("restore <user>")
    .description(
      "bring a deleted user back (by id or user name): attributes, roles, groups; no session or password (admin)",
    )
    .addHelpText("after", examples("bizctl users restore leaver"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        const user = await findDeleted(ctx, reference);
        const { data } = await (await ctx.client()).call(deletedUsers.restoreDeletedUser, { params: { id: user.id } });
        ctx.info(`Restored ${user.userName} (${user.id}); it signs in after a reset or invitation link.`);
        const kept = data.groupsNotRestored.filter((group) => group.displayName !== undefined);
        const purged = data.groupsNotRestored.filter((group) => group.displayName === undefined);
        if (kept.length > 0) {
          const names = kept.map((group) => group.displayName).join(", ");
          ctx.info(`Not back in the deleted groups ${names}: their restore brings it back (bizctl groups restore).`);
        }
        if (purged.length > 0)
          ctx.info(`Not back in ${purged.length} purged group(s): ${purged.map((g) => g.id).join(", ")}.`);
      }),
    );
  group
    .command("purge <user>")
    .description(
      "end the wait of a deleted user (by id or user name): gone for good, its names free (asks first; admin)",
    )
    .addHelpText("after", examples("bizctl users purge leaver --yes"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        const user = await findDeleted(ctx, reference);
        await ctx.confirm(`Purge ${user.userName} (${user.id}) for good?`);
        await (await ctx.client()).call(deletedUsers.purgeDeletedUser, { params: { id: user.id } });
        ctx.info(`Purged ${user.userName}.`);
      }),
    );
}
