import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { updateResource } from "../resource-calls.js";
import { examples, withContext } from "../verb-helpers.js";
import { resolveUser } from "./resolve.js";
import { checkRoles, rolesAttribute } from "./roles.js";
import { printUser } from "./summary.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("set-roles <user> <roles...>")
    .description("replace a user's roles with these (admin, support, member); admins only")
    .addHelpText(
      "after",
      examples("bizctl users set-roles <user> support", "bizctl users set-roles <user> admin member"),
    )
    .action(
      withContext(io, async (ctx, reference: string, roles: string[]) => {
        ctx.requireCredential();
        checkRoles(roles);
        const { id } = await resolveUser(ctx, reference);
        const user = await updateResource(ctx, id, (current) => ({ ...current, roles: rolesAttribute(roles) }));
        ctx.info(`${String(user.userName)} now holds ${roles.join(", ")}.`);
        await printUser(ctx, user);
      }),
    );
}
