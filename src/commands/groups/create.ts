import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import { SCIM_URN } from "../../contract/scim.js";
import * as groups from "../../contract/scim-groups.js";
import { examples, withContext } from "../verb-helpers.js";
import { checkRoles, groupRecord } from "./shared.js";

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function register(group: Command, io: Context["io"]): void {
  group
    .command("create <name>")
    .description("create a group (admins); --role gives its members a role")
    .option("--role <role>", "a role the group grants its members (admin, support, member); repeatable", collect)
    .addHelpText("after", examples("bizctl groups create 'Front Desk' --role support", "bizctl groups create Sales"))
    .action(
      withContext(io, async (ctx, name: string, options: { role?: string[] }) => {
        ctx.requireCredential();
        const roles = checkRoles(options.role ?? []);
        await refuseBeforeAsking(ctx, "groups:create", {}, { about: "groups" });
        const body = {
          schemas: [SCIM_URN.group, SCIM_URN.groupRoles],
          displayName: name,
          [SCIM_URN.groupRoles]: { roles },
        };
        const { data } = await (await ctx.client()).call(groups.createGroup, { body });
        ctx.info(`Created the group ${name}${roles.length ? `, granting ${roles.join(", ")}` : ""}.`);
        await ctx.print(groupRecord(data as Record<string, unknown>));
      }),
    );
}
