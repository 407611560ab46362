import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import * as groups from "../../contract/scim-groups.js";
import { resolveUser } from "../user-reference.js";
import { examples, namesFrom, withContext } from "../verb-helpers.js";
import { PATCH_SCHEMAS, resolveGroup } from "./shared.js";

/** add-member and remove-member: one PATCH of the group, its users named by id, user name or e-mail. */
function membershipVerb(group: Command, io: Context["io"], verb: "add" | "remove"): void {
  group
    .command(`${verb}-member <group> <users...>`)
    .description(
      `${verb === "add" ? "add users to" : "remove users from"} a group (admin; support on a group that grants neither admin nor support); '-': users from stdin`,
    )
    .addHelpText("after", examples(`bizctl groups ${verb}-member 'Help Desk' alice bob`))
    .action(
      withContext(io, async (ctx, reference: string, references: string[]) => {
        ctx.requireCredential();
        const found = await resolveGroup(ctx, reference);
        await refuseBeforeAsking(
          ctx,
          "groups:change-members",
          { roles: found.roles },
          { about: `the group ${found.displayName}` },
        );
        const users = [];
        for (const name of await namesFrom(ctx, references, "users")) users.push(await resolveUser(ctx, name));
        const Operations =
          verb === "add"
            ? [{ op: "add", path: "members", value: users.map((user) => ({ value: user.id })) }]
            : users.map((user) => ({ op: "remove", path: `members[value eq ${JSON.stringify(user.id)}]` }));
        await (await ctx.client()).call(groups.patchGroup, {
          params: { id: found.id },
          body: { schemas: PATCH_SCHEMAS, Operations },
        });
        const names = users.map((user) => user.userName).join(", ");
        ctx.info(
          verb === "add" ? `Added ${names} to ${found.displayName}.` : `Removed ${names} from ${found.displayName}.`,
        );
      }),
    );
}

export function register(group: Command, io: Context["io"]): void {
  membershipVerb(group, io, "add");
  membershipVerb(group, io, "remove");
}
