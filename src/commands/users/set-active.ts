import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { caller } from "../../cli/permissions.js";
import { ACTIVE_ADMINS_FILTER, allows } from "../../contract/policy/index.js";
import * as resources from "../../contract/resources.js";
import { updateResource } from "../resource-calls.js";
import { examples, namesFrom, withContext } from "../verb-helpers.js";
import { actOnFilter, checkSelection, DISABLE, ENABLE, type FilterOptions } from "./by-filter.js";
import { USER_COLUMNS } from "./columns.js";
import { resolveUser } from "./resolve.js";
import { printUser } from "./summary.js";

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

/** What `users disable` and `users enable` do to one user: set `active`, say what it means. */
async function setActiveOf(ctx: Context, reference: string, active: boolean): Promise<Record<string, unknown>> {
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
  return user;
}

/**
 * `users disable|enable USER...` (`-`: the users stdin names): one user prints its summary, as
 * `users get` does; several print as `users list` does, one row each.
 */
export async function setActive(ctx: Context, references: string[], active: boolean): Promise<void> {
  const names = await namesFrom(ctx, references, "users");
  const users = [];
  for (const name of names) users.push(await setActiveOf(ctx, name, active));
  if (references.length === 1 && references[0] !== "-" && users[0]) return printUser(ctx, users[0]);
  if (users.length > 0) await ctx.print(users, USER_COLUMNS);
}

/** `users disable` and `users enable`, which undoes it: one user, several, stdin's, or a filter's. */
export function registerSetActive(group: Command, io: Context["io"], active: boolean): void {
  const verb = active ? "enable" : "disable";
  group
    .command(`${verb} [users...]`)
    .description(
      active
        ? "set active=true again (undoes disable); or for every user --filter selects, in bulk"
        : "set active=false: logins refused, sessions ended; or for every user --filter selects, in bulk",
    )
    .option("--filter <expr>", `${verb} every user this SCIM filter selects, through POST /Bulk (asks first)`)
    .option("--dry-run", "with --filter: print how many users it selects and the first ids; change nothing")
    .addHelpText(
      "after",
      examples(
        `bizctl users ${verb} <user>`,
        `bizctl users ${verb} --filter 'department eq "Contractors"' ${active ? "--dry-run" : "--yes"}`,
        `bizctl users list --filter 'title eq "Intern"' --query '[].userName' -o table | bizctl users ${verb} - --yes`,
      ),
    )
    .action(
      withContext(io, async (ctx, references: string[], options: FilterOptions) => {
        if (checkSelection(references, options, verb)) {
          return actOnFilter(ctx, options.filter as string, options, active ? ENABLE : DISABLE);
        }
        return setActive(ctx, references, active);
      }),
    );
}
