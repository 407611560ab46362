import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { ApiError } from "../../client/errors.js";
import * as resources from "../../contract/resources.js";
import { SCIM_URN } from "../../contract/scim.js";
import * as scimUsers from "../../contract/scim-users.js";
import { examples, forPerson, withContext } from "../verb-helpers.js";
import { recentActivity } from "./recent-activity.js";
import { resolveUser } from "./resolve.js";
import { userSummary } from "./summary.js";

/**
 * The user with its manager's name beside the manager's id (SCIM's `manager.displayName`), for a
 * person's summary: the manager's display name, else its user name. Left as it is when the record
 * names it already, or the caller may not read the manager (a member), or it is gone.
 */
async function withManagerName(ctx: Context, user: Record<string, unknown>): Promise<Record<string, unknown>> {
  const manager = user.manager as { value?: unknown; displayName?: unknown } | undefined;
  if (typeof manager?.value !== "string" || manager.value === "" || manager.displayName) return user;
  try {
    const { data } = await (await ctx.client()).call(resources.getResource, {
      params: { resourceId: manager.value },
      query: { resourcetypes: "User" },
    });
    const found = data as Record<string, unknown>;
    const name = found.displayName ?? found.userName;
    return typeof name === "string" ? { ...user, manager: { ...manager, displayName: name } } : user;
  } catch (error) {
    if (error instanceof ApiError) return user;
    throw error;
  }
}

/**
 * Each effective role with where it comes from (`support (Help Desk), member (direct)`), as the
 * account state says it to admin and support; undefined for a caller who does not see it.
 */
async function rolesWithSources(ctx: Context, id: string): Promise<string | undefined> {
  const { data } = await (await ctx.client()).call(scimUsers.getUser, {
    params: { id },
    query: { attributes: `${SCIM_URN.account}:roleSources` },
  });
  const account = (data as Record<string, unknown>)[SCIM_URN.account] as
    | { roleSources?: { role: string; source: string }[] }
    | undefined;
  const sources = account?.roleSources;
  if (!sources) return undefined;
  return sources.length > 0 ? sources.map(({ role, source }) => `${role} (${source})`).join(", ") : "none";
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("get <user>")
    .description("one user, by id, user name or e-mail; on a terminal each role with where it comes from")
    .addHelpText("after", examples("bizctl users get admin", "bizctl users get <e-mail> --json"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        const user = await resolveUser(ctx, reference);
        // a person at a table gets a summary and the user's recent activity under it; data
        // formats, --fields and --query stay the user alone, as the API answers it
        const person = forPerson(ctx);
        if (!person) return ctx.print(user);
        const roles = await rolesWithSources(ctx, user.id);
        // the manager by name for a person; a data format keeps the record as the API answers it
        await ctx.print({ ...userSummary(await withManagerName(ctx, user)), ...(roles !== undefined && { roles }) });
        // written as it is: printText would show the table's bold headers as escape codes
        ctx.io.stdout.write(await recentActivity(ctx, String(user.id)));
      }),
    );
}
