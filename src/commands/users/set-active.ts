import type { Context } from "../../cli/command-context.js";
import { caller } from "../../cli/permissions.js";
import { ACTIVE_ADMINS_FILTER, allows } from "../../contract/policy/index.js";
import * as resources from "../../contract/resources.js";
import { updateResource } from "../resource-calls.js";
import { USER_COLUMNS } from "./columns.js";
import { resolveUser } from "./resolve.js";

/**
 * Disabling oneself ends one's own session at once, so it is asked first; but not what the server
 * refuses anyway: support disabling itself (only an admin acts on staff accounts), or the last
 * active admin (409 last_admin, with its hint).
 */
async function confirmDisablingOneself(ctx: Context, me: { id: string; roles: string[] }): Promise<void> {
  if (!allows({ userId: me.id, roles: me.roles }, "users:set-active", { id: me.id, roles: me.roles })) return;
  const { data } = await (await ctx.client()).call(resources.listResources, {
    query: { resourcetypes: "User", filter: ACTIVE_ADMINS_FILTER, count: 0 },
  });
  if (data.totalResults <= 1) return;
  await ctx.confirm(
    "Disable your own account? Your sessions end at once and you cannot log in until another admin enables it.",
  );
}

/** What `users disable` and `users enable` do: set `active`, say what it means, print the user. */
export async function setActive(ctx: Context, reference: string, active: boolean): Promise<void> {
  ctx.requireCredential();
  const { id } = await resolveUser(ctx, reference);
  if (!active) {
    const me = await caller(ctx);
    if (me.id === id) await confirmDisablingOneself(ctx, me);
  }
  const user = await updateResource(ctx, id, (current) => ({ ...current, active }));
  ctx.info(
    active
      ? `Enabled ${String(user.userName)}.`
      : `Disabled ${String(user.userName)}: logins are refused and their sessions ended.`,
  );
  await ctx.print(user, USER_COLUMNS);
}
