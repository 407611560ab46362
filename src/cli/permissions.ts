import * as auth from "../contract/auth.js";
import type { Context } from "./command-context.js";
import { CliError, EXIT } from "./errors.js";

const ROLE_WORDS: Record<string, string> = { admin: "an admin", support: "support staff", member: "a member" };

/** "an admin or a member": who holds one of these roles, in words. */
export const holdersOf = (roles: readonly string[]) => roles.map((role) => ROLE_WORDS[role] ?? role).join(" or ");

/** Who the credential acts for, as the server sees it now: id, user name and roles. */
export async function caller(ctx: Context) {
  return (await (await ctx.client()).call(auth.isLogged, {})).data.user;
}

/**
 * Before a question or a confirmation: whether the caller's roles may do what it asks about at
 * all, so that nobody answers a prompt only to be refused. The roles come from the server
 * (`GET /auth/isLogged`, what `auth status` shows: a profile's stored roles may be stale), and the
 * server still decides the request itself. `only` names who may ("Only an admin may delete
 * users"); the refusal says the caller's roles and whom to ask, as the server's refusals do.
 * Returns the caller.
 */
export async function refuseBeforeAsking(
  ctx: Context,
  may: (roles: readonly string[]) => boolean,
  only: string,
): Promise<Awaited<ReturnType<typeof caller>>> {
  const me = await caller(ctx);
  const { roles } = me;
  if (may(roles)) return me;
  const yours = roles.length > 0 ? `your account is ${roles.join(" and ")}` : "your account has no role";
  throw new CliError(`${only}, and ${yours}: ask an admin to do it.`, EXIT.forbidden, "forbidden");
}
