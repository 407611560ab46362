import type { Context } from "../../cli/command-context.js";
import { updateResource } from "../resource-calls.js";
import { USER_COLUMNS } from "./columns.js";
import { resolveUser } from "./resolve.js";

/** What `users disable` and `users enable` do: set `active`, say what it means, print the user. */
export async function setActive(ctx: Context, reference: string, active: boolean): Promise<void> {
  ctx.requireCredential();
  const { id } = await resolveUser(ctx, reference);
  const user = await updateResource(ctx, id, (current) => ({ ...current, active }));
  ctx.info(
    active
      ? `Enabled ${String(user.userName)}.`
      : `Disabled ${String(user.userName)}: logins are refused and their sessions ended.`,
  );
  await ctx.print(user, USER_COLUMNS);
}
