import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as groups from "../../contract/scim-groups.js";
import { examples, withContext } from "../verb-helpers.js";
import { resolveGroup } from "./shared.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("members <group>")
    .description("the users of a group")
    .addHelpText("after", examples("bizctl groups members 'Help Desk'", "bizctl groups members <id> --json"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        const { id } = await resolveGroup(ctx, reference);
        const { data } = await (await ctx.client()).call(groups.getGroup, {
          params: { id },
          query: { attributes: "members" },
        });
        const members = (data.members ?? []).map((member) => ({ id: member.value, userName: member.display }));
        await ctx.printList(members, ["id", "userName"], "members");
      }),
    );
}
